"""``margin eval``, its REPL, ``margin render`` and ``margin hardware``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_check_command import margin


def test_eval_prints_a_readable_value(tmp_path: Path) -> None:
    result = margin("eval", "1.7e7 byte / (9e10 byte/s)", cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, "189 µs")


def test_eval_json_gives_si_value_unit_and_display(tmp_path: Path) -> None:
    out = json.loads(margin("eval", "--format", "json", "1e15 FLOP/s / (2.7 USD/h)", cwd=tmp_path).stdout)
    assert out["unit"] == "FLOP/USD" and out["display"] == "1.33e18 FLOP/USD"
    assert out["value"] == pytest.approx(1e15 * 3600 / 2.7)


def test_eval_errors_exit_1_with_a_diagnostic(tmp_path: Path) -> None:
    result = margin("eval", "1 GB + 1 s", cwd=tmp_path)
    assert result.returncode == 1 and "U001" in result.stderr


def test_repl_keeps_definitions_between_lines(tmp_path: Path) -> None:
    result = margin("eval", cwd=tmp_path, stdin="B = 128\nB * 2 byte\nB ≈ 130\nquit\n")
    assert result.stdout.splitlines() == ["128", "256 bytes", "✓ computed 128; claim 130 holds"]


def test_render_substitutes_inline_values_atomically(tmp_path: Path) -> None:
    (tmp_path / "in.md").write_text("```calc\nt = 3600 s\n```\n\nIt takes {calc}`t -> h`.\n", "utf-8")
    assert margin("render", "in.md", "-o", "out.md", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out.md").read_text("utf-8").endswith("It takes 1 h.\n")
    assert not list(tmp_path.glob(".*margin-tmp"))


def test_hardware_lists_fields_with_sources(tmp_path: Path) -> None:
    result = margin("hardware", "h100", cwd=tmp_path)
    assert result.returncode == 0
    assert "flops_bf16" in result.stdout and "https://" in result.stdout
    assert margin("hardware", "no_such_chip", cwd=tmp_path).returncode == 2
