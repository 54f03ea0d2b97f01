"""``margin coverage`` and ``margin check --coverage``: tables, formats, --fail-under, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from server.cli import main
from tests.cli.test_check_command import margin

DRAFT = """# Matmul

```calc
D = 8192
F = 4 * D
flops = 2 * D * F
```

## Problems

**Question 1:** How many FLOPs?

`flops / 2 = 268435456`
"""

UNTESTED = DRAFT.replace("```\n\n## Problems", "critical_intensity = 240\n```\n\n## Problems")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "full.md").write_text(DRAFT, "utf-8")
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "untested.md").write_text(UNTESTED, "utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["coverage", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_text_report_is_a_table_per_file_and_section_with_a_total(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _run(capsys, "full.md")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "Name",
        "Concepts",
        "Covered",
        "Miss",
        "Cover",
        "Problems",
        "Checks",
        "Pass",
        "Fail",
        "Untested",
    ]
    assert lines[2].split() == ["full.md", "5", "5", "0", "100%", "1", "1", "1", "0", "0"]
    assert lines[3].split() == ["#", "Matmul", "4", "4", "0", "100%", "0", "0", "0", "0", "0"]
    assert lines[4].split() == ["##", "Problems", "1", "1", "0", "100%", "1", "1", "1", "0", "0"]
    assert lines[-1].split() == ["TOTAL", "5", "5", "0", "100%", "1", "1", "1", "0", "0"]


def test_untested_definitions_are_listed_with_their_lines(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, "draft/untested.md")
    assert code == 0
    assert "Untested concepts (no problem tests them):\n  draft/untested.md:7: critical_intensity" in out
    assert out.splitlines()[2].split()[:5] == ["draft/untested.md", "6", "5", "1", "83%"]


def test_fail_under_passes_at_100_on_a_covered_draft_and_fails_on_a_draft_with_an_untested_definition(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "--fail-under", "100", "full.md")[0] == 0
    code, _out, err = _run(capsys, "--fail-under", "100", "draft/")
    assert code == 1
    assert "Coverage failure: total of 83.3% is less than --fail-under 100%" in err
    assert _run(capsys, "--fail-under", "80", "draft/")[0] == 0


def test_usage_errors_exit_2(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "--fail-under", "101", "full.md")[0] == 2
    assert _run(capsys, "missing.md")[0] == 2
    assert _run(capsys, "--format", "yaml", "full.md")[0] == 2


def test_json_lists_concepts_with_status_and_the_problems_covering_them(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _run(capsys, "--format", "json", ".")
    report = json.loads(out)
    assert code == 0 and report["version"] == 1
    assert report["totals"] == {"files": 2, "concepts": 11, "covered": 10, "percent": 90.91}
    by_path = {f["path"]: f for f in report["files"]}
    items = {i["name"]: i for s in by_path["draft/untested.md"]["sections"] for i in s["items"]}
    assert items["critical_intensity"]["status"] == "untested" and items["critical_intensity"]["line"] == 7
    assert items["D"]["problems"] == [
        {"path": "draft/untested.md", "title": "Question 1", "line": 12, "status": "pass"}
    ]


def test_markdown_is_a_table_and_a_list(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _err = _run(capsys, "--format", "markdown", "draft/untested.md")
    assert "| **draft/untested.md** | 6 | 5 | 1 | 83% | 1 | 1 | 1 | 0 | 0 |" in out
    assert "- `draft/untested.md:7` critical_intensity" in out


def test_html_marks_sections_and_concepts_and_links_problems(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(capsys, "--format", "html", "-o", "report.html", "draft/untested.md")
    page = (folder / "report.html").read_text("utf-8")
    assert code == 0 and "Coverage: 5 of 6 concepts" in err
    assert '<h3 class="heading tested" data-status="tested"># Matmul' in page
    assert (
        '<li class="concept untested" data-status="untested"><span class="line">7</span> <code>critical_intensity</code>'
        in page
    )
    assert '<a href="#p0-12">Question 1 — pass</a>' in page and 'id="p0-12"' in page


def test_failing_checks_cover_and_are_listed_as_failing(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "wrong.md").write_text(DRAFT.replace("268435456", "12345"), "utf-8")
    code, out, _err = _run(capsys, "--fail-under", "100", "wrong.md")
    assert code == 0  # a failing check is margin check's business; the concepts are covered
    assert "Tested only by failing checks:\n  wrong.md:4: D (by Question 1)" in out


def test_problems_in_a_file_that_imports_another_cover_its_concepts(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "lib").mkdir()
    (folder / "lib" / "base.md").write_text("# Base\n\n```calc\nx = 3\n```\n", "utf-8")
    (folder / "lib" / "use.md").write_text(
        '# Use\n\n```calc\nimport "lib/base.md"\n```\n\n<!-- problem: p -->\n`x * 2 = 6`\n<!-- /problem -->\n', "utf-8"
    )
    assert _run(capsys, "--fail-under", "100", "lib/")[0] == 0
    assert _run(capsys, "--fail-under", "100", "lib/base.md")[0] == 1


def test_check_coverage_prints_the_one_line_total(folder: Path) -> None:
    result = margin("check", "--coverage", ".", cwd=folder)
    assert result.returncode == 0
    assert result.stdout.splitlines()[-1] == "Coverage: 10 of 11 concepts tested by problems (91%) in 2 files"


CHROMIUM = shutil.which("chromium")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (the VS Code tests use the same one)")
def test_the_html_report_opens_in_a_real_browser_and_shows_the_sections(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "--format", "html", "-o", "report.html", ".")[0] == 0
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             f"--user-data-dir={folder / 'profile'}", "--dump-dom"]  # fmt: skip
    assert CHROMIUM is not None
    shown = subprocess.run(
        [CHROMIUM, *flags, (folder / "report.html").as_uri()], capture_output=True, text=True, timeout=120
    )
    dom = shown.stdout
    assert "<title>Margin coverage: 91%</title>" in dom, shown.stderr[-2000:]
    # Every section of both files, marked, and the untested definition in red with no problem to link.
    assert dom.count('class="heading tested"') == 4
    assert (
        '<li class="concept untested" data-status="untested"><span class="line">7</span> <code>critical_intensity</code>'
        in dom
    )
    assert dom.count('href="#p') >= 5
