"""``margin render`` for books: folders into a build tree, ``--in-place``, ``--format json``, and its exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import margin

BLOCK = "```calc\nt = 3 * 4 s        # three steps\nt ≈ 12 s\n```\n"
CHAPTER = BLOCK + "\nIt takes {calc}`t -> ms`.\n"


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "part").mkdir(parents=True)
    (tmp_path / "docs" / "intro.md").write_text(CHAPTER, "utf-8")
    (tmp_path / "docs" / "part" / "two.md").write_text("Twice: {calc}`2 * 21`.\n", "utf-8")
    (tmp_path / "docs" / "logo.png").write_bytes(b"\x89PNG")
    return tmp_path


def test_a_folder_renders_into_a_build_tree_that_keeps_its_layout(book: Path) -> None:
    result = margin("render", "docs", "-o", "_build/margin", cwd=book)
    assert result.returncode == 0, result.stderr
    out = book / "_build" / "margin"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md")) == ["intro.md", "part/two.md"]
    assert (out / "part" / "two.md").read_text("utf-8") == "Twice: 42.\n"
    intro = (out / "intro.md").read_text("utf-8")
    assert "It takes 12000 ms." in intro
    # Calc fences show what the editor's inlay hints show, as trailing comments.
    assert "t = 3 * 4 s  # = 12 s · three steps\nt ≈ 12 s     # ✓\n" in intro
    assert (book / "docs" / "intro.md").read_text("utf-8") == CHAPTER  # the sources are untouched


def test_the_output_folder_inside_the_book_is_not_read_again(book: Path) -> None:
    assert margin("render", "docs", "-o", "docs/_build", cwd=book).returncode == 0
    result = margin("render", "docs", "-o", "docs/_build", cwd=book)
    assert result.returncode == 0, result.stderr
    assert not (book / "docs" / "_build" / "_build").exists()


def test_a_folder_needs_an_output_folder_or_in_place(book: Path) -> None:
    result = margin("render", "docs", cwd=book)
    assert result.returncode == 2 and "-o" in result.stderr and "--in-place" in result.stderr


def test_in_place_rewrites_every_draft_of_a_folder(book: Path) -> None:
    assert margin("render", "--in-place", "docs", cwd=book).returncode == 0
    assert (book / "docs" / "part" / "two.md").read_text("utf-8") == "Twice: 42.\n"
    assert "It takes 12000 ms." in (book / "docs" / "intro.md").read_text("utf-8")
    assert not list(book.rglob("*.margin-tmp"))


def test_block_values_can_be_left_out(book: Path) -> None:
    result = margin("render", "docs/intro.md", "--no-block-values", cwd=book)
    assert result.returncode == 0
    assert result.stdout == BLOCK + "\nIt takes 12000 ms.\n"


def test_json_gives_every_value_verdict_and_problem_keyed_by_file_and_span(book: Path) -> None:
    (book / "docs" / "quiz.md").write_text("**Question 1:** How long?\n\n```calc\nq = 2 s\nq ≈ 3 s\n```\n", "utf-8")
    result = margin("render", "--format", "json", "docs", cwd=book)
    assert result.returncode == 0, result.stderr  # a failing check is a verdict, not a failure to evaluate
    report = json.loads(result.stdout)
    assert report["version"] == 1 and report["kind"] == "render"
    assert sorted(report["files"]) == ["docs/intro.md", "docs/part/two.md", "docs/quiz.md"]
    intro = report["files"]["docs/intro.md"]
    assert intro["absolute"] == str((book / "docs" / "intro.md").resolve())
    [role] = intro["roles"]
    assert role | {"value": None} == {
        "line": 6, "column": 10, "end_line": 6, "end_column": 25, "expr": "t -> ms", "ok": True,
        "display": "12000 ms", "value": None, "unit": "s", "message": None,
    }  # fmt: skip
    assert role["value"] == pytest.approx(12.0)
    [block] = intro["blocks"]
    assert (block["line"], block["end_line"], block["hidden"]) == (1, 4, False)
    assert block["rendered"] == "t = 3 * 4 s  # = 12 s · three steps\nt ≈ 12 s     # ✓"
    assert block["annotations"] == [{"line": 2, "text": "= 12 s"}, {"line": 3, "text": "✓"}]
    assert [(c["line"], c["status"]) for c in intro["checks"]] == [(3, "pass")]
    quiz = report["files"]["docs/quiz.md"]
    [problem] = quiz["problems"]
    assert (problem["id"], problem["status"], problem["line"], problem["title_span"]["end_column"]) == (
        "Question 1", "fail", 1, 16,
    )  # fmt: skip
    assert [c["status"] for c in quiz["checks"]] == ["fail"]
    assert report["summary"]["roles"] == {"ok": 2, "failed": 0}


def test_a_role_that_cannot_be_evaluated_exits_1_naming_it(book: Path) -> None:
    (book / "docs" / "part" / "two.md").write_text("Twice: {calc}`2 * missing`.\n", "utf-8")
    result = margin("render", "docs", "-o", "out", cwd=book)
    assert result.returncode == 1
    assert "docs/part/two.md:1:19: error N001: unknown name 'missing'" in result.stderr
    assert "docs/part/two.md:1:8: error: {calc}`2 * missing` has no value" in result.stderr
    assert (book / "out" / "part" / "two.md").read_text("utf-8") == "Twice: {calc}`2 * missing`.\n"
    report = json.loads(margin("render", "--format", "json", "docs", cwd=book).stdout)
    [role] = report["files"]["docs/part/two.md"]["roles"]
    assert role["ok"] is False and "unknown name 'missing'" in role["message"]
    assert margin("render", "--format", "json", "docs", cwd=book).returncode == 1


def test_strict_also_fails_on_a_failing_check(book: Path) -> None:
    (book / "docs" / "intro.md").write_text(CHAPTER.replace("≈ 12 s", "≈ 13 s"), "utf-8")
    assert margin("render", "docs", "-o", "out", cwd=book).returncode == 0
    result = margin("render", "--strict", "docs", "-o", "out", cwd=book)
    assert result.returncode == 1 and "docs/intro.md:3:1: error C001" in result.stderr


def test_a_build_tree_over_its_own_sources_is_refused(book: Path) -> None:
    result = margin("render", "docs", "-o", "docs", cwd=book)
    assert result.returncode == 2
    assert (book / "docs" / "intro.md").read_text("utf-8") == CHAPTER
    (book / "copy.md").write_text(CHAPTER, "utf-8")
    result = margin("render", "copy.md", "docs/intro.md", "-o", "docs", cwd=book)
    assert result.returncode == 2 and "is an input draft" in result.stderr
    assert (book / "docs" / "intro.md").read_text("utf-8") == CHAPTER
