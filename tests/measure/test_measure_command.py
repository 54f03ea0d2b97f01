"""margin measure fills .margin/measurements.json; margin check reads it (real CLI, real workers on the CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.measure.conftest import needs_jax

DRAFT = """# Matmul

```calc
t = measure_matmul(f32[64, 64], f32[64, 64])
t.median < 10 s
t.samples >= 3
```
"""
FAST = ["--samples", "3", "--min-seconds", "0", "--warmup", "1"]


def margin(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "server", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.margin]\ntargets.gpu = { hosts = ["unreachable.example"], chip = "h100" }\n', "utf-8"
    )
    (tmp_path / "draft.md").write_text(DRAFT, "utf-8")
    return tmp_path


@needs_jax
def test_measure_fills_the_cache_and_check_then_gives_verdicts(project: Path) -> None:
    before = margin(project, "check", "draft.md", "--format", "json")
    assert before.returncode == 0  # untested, never failed
    assert [d["code"] for d in json.loads(before.stdout)["diagnostics"]] == ["T003"] * 3  # the call, then both checks
    assert "no measurement for any device; run margin measure" in before.stdout

    measured = margin(project, "measure", "draft.md", *FAST)
    assert measured.returncode == 0, measured.stderr
    assert measured.stdout.startswith("draft.md:4:5: measure_matmul(f32[64, 64], f32[64, 64]) on cpu: median ")
    cache = json.loads((project / ".margin" / "measurements.json").read_text("utf-8"))
    [devices] = cache["entries"].values()
    entry = devices["cpu"]
    assert entry["request"] == {"op": "matmul", "B": 64, "D": 64, "F": 64, "dtype": "float32"}
    assert entry["site"] == {"path": "draft.md", "call": "measure_matmul(f32[64, 64], f32[64, 64])"}
    assert entry["provenance"]["device_kind"] == "cpu" and entry["provenance"]["method"]["min_samples"] == 3
    assert len(entry["result"]["samples"]) == entry["result"]["n"] >= 3

    after = margin(project, "check", "draft.md", "--format", "json")
    report = json.loads(after.stdout)
    codes, statuses = [d["code"] for d in report["diagnostics"]], [c["status"] for c in report["checks"]]
    # A quiet machine gives two passes; a busy one a noisy-measurement warning and no verdict (never a failure).
    assert (codes, statuses) in (([], ["pass", "pass"]), (["T004", "T003"], ["skip", "pass"]))
    assert after.returncode == 0

    again = margin(project, "measure", "draft.md", *FAST)
    assert again.returncode == 0 and again.stdout == ""  # nothing left to measure
    assert "measured 0 of 0 on local" in again.stderr


def test_a_dry_run_lists_the_calls_and_a_call_for_another_chip_is_skipped(project: Path) -> None:
    (project / "draft.md").write_text(DRAFT + "\n```calc\nh = measure_copy(1 MiB, h100)\n```\n", "utf-8")
    listed = margin(project, "measure", "--dry-run")
    assert listed.returncode == 0
    assert listed.stdout == "draft.md:4:5: measure_matmul(f32[64, 64], f32[64, 64]) would be measured on local\n"
    assert "draft.md:10:5: skipped: measure_copy(1 MiB, h100) is for h100; target local names no chip" in listed.stderr
    as_h100 = margin(project, "measure", "--dry-run", "--chip", "h100")  # this machine's device is declared an h100
    assert "draft.md:10:5: measure_copy(1 MiB, h100) would be measured on local" in as_h100.stdout


def test_an_unreachable_target_is_one_line_and_exit_1(project: Path, fake_remote: Path) -> None:
    (project / "draft.md").write_text("```calc\nh = measure_copy(1 MiB, h100)\nh.median < 1 s\n```\n", "utf-8")
    env_path = os.environ["PATH"]  # the fake ssh, first on PATH
    result = subprocess.run([sys.executable, "-m", "server", "measure", "--on", "gpu", "-q", *FAST], cwd=project,
                            env={**os.environ, "PATH": env_path, "PYTHONPATH": str(ROOT)}, capture_output=True,
                            text=True, timeout=300)  # fmt: skip
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "draft.md:2:5: measure_copy(1 MiB, h100) not measured on gpu: gpu (unreachable.example): the worker could "
        "not be reached: ssh failed to connect or authenticate (exit 255, a transport failure) before it answered; "
        "it said: ssh: connect to host unreachable.example port 22: Connection refused (after 1 restart of the gang)"
    ]
    check = margin(project, "check")
    assert check.returncode == 0 and "0 failed" in check.stdout


def test_an_unknown_target_is_a_usage_error(project: Path) -> None:
    result = margin(project, "measure", "--on", "tpu")
    assert result.returncode == 2
    assert result.stderr == "margin: unknown target 'tpu'; known: gpu, local ([tool.margin.targets])\n"
