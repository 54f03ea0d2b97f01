"""The public Python API (``import margin``): its documented examples and its contract."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

import margin
from tests.conftest import ROOT


@pytest.mark.parametrize("document", [ROOT / "docs" / "api.md", ROOT / "margin" / "__init__.py"], ids=lambda p: p.name)
def test_documented_examples_hold(document: Path) -> None:
    if document.suffix == ".py":
        results = doctest.testmod(margin, optionflags=doctest.ELLIPSIS)
    else:
        results = doctest.testfile(str(document), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0
    assert results.failed == 0


def test_records_match_the_json_report(tmp_path: Path) -> None:
    """``check_paths`` returns what ``margin check --format json`` prints, record for record."""
    import subprocess
    import sys

    (tmp_path / "draft.md").write_text("It takes `1.7e7 / 9e10 = 188us`, not `2 * 3 = 7`.\n", "utf-8")
    printed = subprocess.run(
        [sys.executable, "-m", "server", "check", "--format", "json", "draft.md"], cwd=tmp_path,
        capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert printed.returncode == 1
    from_cli = json.loads(printed.stdout)
    from_api = margin.check_paths([tmp_path / "draft.md"])
    strip = lambda records: [{k: v for k, v in r.items() if k != "path"} for r in records]  # noqa: E731
    assert strip(from_api["checks"]) == strip(from_cli["checks"])
    assert strip(from_api["diagnostics"]) == strip(from_cli["diagnostics"])
    assert from_api["summary"] == from_cli["summary"]


def test_check_text_settings_and_errors(tmp_path: Path) -> None:
    config = tmp_path / "margin.toml"
    config.write_text('tolerance = "15%"\n', "utf-8")
    draft = "About 9.0 days<!-- ≈ 8 days -->.\n"
    assert margin.check_text(draft)["summary"]["errors"] == 1
    assert margin.check_text(draft, config=config)["summary"]["errors"] == 0
    assert margin.check_text(draft, config=str(config))["summary"]["errors"] == 0
    with pytest.raises(margin.MarginError, match="tolerance"):
        margin.check_text(draft, config={"tolerance": 3})
    with pytest.raises(margin.MarginError, match="unknown setting"):
        margin.check_text(draft, config={"tolerence": "5%"})


def test_check_text_resolves_imports_next_to_its_path(tmp_path: Path) -> None:
    (tmp_path / "constants.md").write_text("```calc\nbw = 9e10 byte/s\n```\n", "utf-8")
    draft = '```calc\nimport "constants.md"\nt = 1.7e7 byte / bw\n```\n\nIt takes 189 µs<!-- ≈ t -->.\n'
    report = margin.check_text(draft, path=str(tmp_path / "draft.md"))
    assert [c["status"] for c in report["checks"]] == ["pass"], report["diagnostics"]


def test_check_paths_errors(tmp_path: Path) -> None:
    with pytest.raises(margin.MarginError, match="no such file"):
        margin.check_paths([tmp_path / "missing.md"])
    with pytest.raises(margin.MarginError, match="no Markdown files"):
        margin.check_paths([tmp_path])


def test_check_paths_lists_what_it_could_not_read(tmp_path: Path, unreadable) -> None:
    (tmp_path / "good.md").write_text("`2 * 3 = 6`\n", "utf-8")
    (tmp_path / "locked.md").write_text("`2 * 3 = 7`\n", "utf-8")
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "c.md").write_text("`2 * 3 = 8`\n", "utf-8")
    unreadable(tmp_path / "locked.md")
    unreadable(tmp_path / "private")
    report = margin.check_paths([tmp_path])
    assert [c["status"] for c in report["checks"]] == ["pass"]
    skipped = {Path(s["path"]).name: s["reason"] for s in report["skipped_paths"]}
    assert set(skipped) == {"locked.md", "private"}, skipped
    assert all("cannot read" in reason for reason in skipped.values())
