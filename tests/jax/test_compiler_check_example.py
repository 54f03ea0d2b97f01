"""examples/compiler-check.md in a trusted workspace: every hand derivation agrees with XLA, nothing untested."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import ROOT, margin
from tests.jax.conftest import needs_jax

pytestmark = needs_jax

EXAMPLE = ROOT / "examples" / "compiler-check.md"


def check_trusted(tmp_path: Path) -> dict[str, object]:
    """``margin check --format json`` of the example copied into a project that says ``trust = true``."""
    shutil.copy2(EXAMPLE, tmp_path / EXAMPLE.name)
    (tmp_path / "pyproject.toml").write_text("[tool.margin]\ntrust = true\n", "utf-8")
    result = margin("check", "--format", "json", EXAMPLE.name, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report: dict[str, object] = json.loads(result.stdout)
    return report


def test_every_check_of_the_example_passes_against_xla_when_trusted(tmp_path: Path) -> None:
    report = check_trusted(tmp_path)
    assert report["diagnostics"] == []  # the block ran: no T001, and no check is untested (T003)
    assert report["summary"] == {
        "files": 1, "checks": {"pass": 17, "fail": 0, "warn": 0, "skip": 0},
        "problems": {"pass": 3, "fail": 0, "untested": 0}, "errors": 0, "warnings": 0,
    }  # fmt: skip
    checks = report["checks"]
    assert isinstance(checks, list)
    values = {claim: [c["value"] for c in checks if c["claim"] == claim] for claim in {c["claim"] for c in checks}}
    # XLA's answers themselves, not only "pass": the matmul count is exact, the total a little above it.
    layer = 2 * (4 * 4096**2 + 2 * 4096 * 16384) * 8 * 2048 + 4 * 8 * 2048 * 2048 * 4096
    dot_flops, flops = values["layer_flops"]
    assert dot_flops == layer and layer < flops < 1.01 * layer
    assert values["B * H * T * T + B * T * F"] == [8 * 32 * 2048 * 2048 + 8 * 2048 * 16384]
    assert values["gather_bytes"] == [7 / 8 * 2 * 2 * 4096 * 16384] * 3
