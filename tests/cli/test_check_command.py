"""``margin check`` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import margin

GOOD = "# Draft\n\n```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\nIt takes `1.7e7 / 9e10 = 188us`, about 189 µs<!-- ≈ t -->.\n"
BAD = "# Draft\n\n```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\nIt takes about **170 ms**<!-- ≈ t -->.\n"


@pytest.fixture
def drafts(tmp_path: Path) -> Path:
    (tmp_path / "good.md").write_text(GOOD, "utf-8")
    (tmp_path / "bad.md").write_text(BAD, "utf-8")
    return tmp_path


def test_exit_codes(drafts: Path) -> None:
    assert margin("check", "good.md", cwd=drafts).returncode == 0
    assert margin("check", "bad.md", cwd=drafts).returncode == 1
    assert margin("check", ".", cwd=drafts).returncode == 1
    assert margin("check", "missing.md", cwd=drafts).returncode == 2
    assert margin("check", "--format", "yaml", "good.md", cwd=drafts).returncode == 2


def test_text_output_points_at_the_prose_number(drafts: Path) -> None:
    result = margin("check", "bad.md", cwd=drafts)
    assert "bad.md:7:18: error C001: check failed: computed 188.9 µs, not ≈ 170 ms" in result.stdout
    assert "|                  ^^^^^^" in result.stdout
    assert "1 file: checks 0 passed, 1 failed" in result.stdout


def test_json_schema(drafts: Path) -> None:
    report = json.loads(margin("check", "--format", "json", ".", cwd=drafts).stdout)
    assert report["version"] == 1
    assert report["files"] == ["bad.md", "good.md"]
    (diagnostic,) = report["diagnostics"]
    assert {k: diagnostic[k] for k in ("path", "line", "column", "end_line", "end_column", "severity", "code")} == {
        "path": "bad.md", "line": 7, "column": 18, "end_line": 7, "end_column": 24, "severity": "error", "code": "C001",
    }  # fmt: skip
    assert diagnostic["fixes"][0]["text"] == "0.189 ms"
    check = next(c for c in report["checks"] if c["path"] == "bad.md")
    assert check["status"] == "fail" and check["unit"] == "s" and check["value"] == pytest.approx(1.7e7 / 9e10)
    assert check["claim"] == "170 ms"
    assert report["summary"]["checks"] == {"pass": 2, "fail": 1, "warn": 0, "skip": 0}


def test_github_annotations(drafts: Path) -> None:
    out = margin("check", "--format", "github", "bad.md", cwd=drafts).stdout
    assert "::error file=bad.md,line=7,col=18,endLine=7,endColumn=24,title=Margin C001::check failed" in out


def test_sarif_is_valid_shape(drafts: Path) -> None:
    sarif = json.loads(margin("check", "--format", "sarif", ".", cwd=drafts).stdout)
    assert sarif["version"] == "2.1.0"
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "C001" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    assert {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]} >= {"C001", "U001"}


def test_junit_has_a_failing_case_for_the_wrong_claim(drafts: Path) -> None:
    root = ET.fromstring(margin("check", "--format", "junit", ".", cwd=drafts).stdout)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["bad.md"].get("failures") == "1" and suites["good.md"].get("failures") == "0"


def test_config_excludes_folders_but_explicit_files_are_checked(drafts: Path) -> None:
    (drafts / "margin.toml").write_text('exclude = ["bad.md"]\n', "utf-8")
    assert margin("check", ".", cwd=drafts).returncode == 0
    assert margin("check", "bad.md", cwd=drafts).returncode == 1


def test_pyproject_config_sets_severity_and_tolerance(drafts: Path) -> None:
    (drafts / "pyproject.toml").write_text('[tool.margin]\nseverity = { C001 = "warning" }\n', "utf-8")
    result = margin("check", "bad.md", cwd=drafts)
    assert result.returncode == 0 and "warning C001" in result.stdout


def test_bad_config_is_a_usage_error(drafts: Path) -> None:
    (drafts / "margin.toml").write_text('tolerance = "lots"\nbogus = 1\n', "utf-8")
    result = margin("check", ".", cwd=drafts)
    assert result.returncode == 2
    assert "tolerance" in result.stderr and "unknown setting 'bogus'" in result.stderr


def test_imports_resolve_across_files(tmp_path: Path) -> None:
    (tmp_path / "constants.md").write_text("```calc\nW = 4.5e10 byte/s\n```\n", "utf-8")
    (tmp_path / "chapter.md").write_text('```calc\nimport "constants.md"\n1.7e7 byte / W ≈ 378 us\n```\n', "utf-8")
    assert margin("check", "chapter.md", cwd=tmp_path).returncode == 0


def test_a_300_file_import_chain_is_checked_to_the_end(tmp_path: Path) -> None:
    # Imports nest to any depth: the last draft's value reaches the first (each draft read and analysed once).
    for k in range(299):
        (tmp_path / f"c{k}.md").write_text(f'```calc\nimport "c{k + 1}.md"\n```\n', "utf-8")
    (tmp_path / "c0.md").write_text('```calc\nimport "c1.md"\nx == 7\n```\n', "utf-8")
    (tmp_path / "c299.md").write_text("```calc\nx = 7\n```\n", "utf-8")
    result = margin("check", "c0.md", cwd=tmp_path)
    assert result.returncode == 0 and "checks 1 passed" in result.stdout, result.stdout + result.stderr
    (tmp_path / "c299.md").write_text("```calc\nx = 70\n```\n", "utf-8")
    assert margin("check", ".", cwd=tmp_path).returncode == 1


def test_crlf_file_reports_the_same_columns(tmp_path: Path) -> None:
    (tmp_path / "crlf.md").write_bytes(BAD.replace("\n", "\r\n").encode())
    report = json.loads(margin("check", "--format", "json", "crlf.md", cwd=tmp_path).stdout)
    assert (report["diagnostics"][0]["line"], report["diagnostics"][0]["column"]) == (7, 18)
