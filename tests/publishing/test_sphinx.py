"""``margin.sphinx`` in a real ``sphinx-build`` (myst-parser, the engine of Jupyter Book 1) on examples/book.

Marked ``publishing``: real builds, run by .ci/run as their own step.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.publishing.conftest import plant

pytest.importorskip("myst_parser", reason="myst-parser is not installed (pip install -e '.[test]')")
pytest.importorskip("sphinx_exercise", reason="sphinx-exercise is not installed (pip install -e '.[test]')")
pytestmark = pytest.mark.publishing


def sphinx_build(book: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", *options, str(book), str(book / "_build" / "html")],
        capture_output=True, text=True, timeout=300, cwd=book,
    )  # fmt: skip


def rendered_values(book: Path) -> dict[str, list[str]]:
    """What ``margin render --format json`` says each page's roles show (the engine's own answer)."""
    result = subprocess.run(
        [sys.executable, "-m", "server", "render", "--format", "json", "."],
        capture_output=True, text=True, timeout=120, cwd=book, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)["files"]
    return {Path(path).stem: [role["display"] for role in record["roles"]] for path, record in files.items()}


def page_text(book: Path, name: str) -> str:
    page = (book / "_build" / "html" / f"{name}.html").read_text("utf-8")
    body = page[page.index('role="main"') :]
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<!--.*?-->", "", body, flags=re.S)))


def test_the_book_builds_with_W_and_shows_every_value_badge_and_annotated_block(book: Path) -> None:
    result = sphinx_build(book, "-W")
    assert result.returncode == 0, result.stderr
    values = rendered_values(book)
    assert sum(map(len, values.values())) == 10
    for name, shown in values.items():
        text = page_text(book, name)
        assert "{calc}" not in text
        for display in shown:
            assert display in text, (name, display)
    intro = page_text(book, "intro")
    assert "The run takes 22.5 days\non 8192 H100s" in intro  # the role's value in the sentence, no gap
    assert "t = C / (chips * h100.flops_bf16 * mfu) -> days  # = 22.5 days" in intro
    assert intro.count("✓ passed") == 2
    memory = page_text(book, "memory")
    assert "min_chips == 11                     # ✓" in memory  # the :::{calc} directive
    assert "state = N * bytes_per_param -> TB           # = 0.84 TB" in memory  # the ```{calc} directive
    assert "✓ passed How many bytes" in memory  # the {exercise}'s badge
    raw = (book / "_build" / "html" / "intro.html").read_text("utf-8")
    assert "highlight-calc notranslate" in raw and 'class="c1"' in raw  # the lexer coloured the comments
    assert 'class="margin-badge margin-pass"' in raw


def test_a_planted_wrong_number_fails_W_at_its_file_and_line(book: Path) -> None:
    line = plant(book / "memory.md", "840 GB<!-- = state -->", "640 GB<!-- = state -->")
    result = sphinx_build(book, "-W")
    assert result.returncode != 0
    assert f"memory.md:{line}: WARNING: check failed: computed 840 GB, not = 640 GB" in result.stderr, result.stderr
    assert "[margin.C001]" in result.stderr


def test_a_failing_problem_gets_a_failed_badge(book: Path) -> None:
    plant(book / "intro.md", "t2 ≈ 90 days", "t2 ≈ 45 days")
    result = sphinx_build(book)
    assert result.returncode == 0  # without -W a failing check is a warning
    assert "intro.md:38: WARNING: check failed: computed 89.96 days, not ≈ 45 days" in result.stderr, result.stderr
    assert "✗ failed: 1 of 2 checks Question 1" in page_text(book, "intro")


def test_fail_on_error_stops_the_build_without_W(book: Path) -> None:
    line = plant(book / "intro.md", "about 22 days<!-- ≈ t -->", "about 12 days<!-- ≈ t -->")
    result = sphinx_build(book, "-D", "margin_fail_on=error")
    assert result.returncode == 1
    assert f"intro.md:{line}: ERROR: check failed: computed 22.49 days, not ≈ 12 days" in result.stderr, result.stderr
    assert "margin_fail_on = 'error'" in result.stderr


def test_a_role_without_a_value_is_a_warning_and_shows_its_expression(book: Path) -> None:
    line = plant(book / "memory.md", "{calc}`min_chips` H100s", "{calc}`min_chip` H100s")
    result = sphinx_build(book)
    assert f"memory.md:{line}: WARNING: {{calc}}`min_chip` has no value: N001: unknown name 'min_chip'" in result.stderr
    assert "So at least min_chip H100s" in page_text(book, "memory")
    assert sphinx_build(book, "-W", "-E").returncode != 0
