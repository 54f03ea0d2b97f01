"""Segments read without markdown-it (``simple_blocks.py``) give exactly the scan markdown-it gives.

Each text is scanned twice, with the simple-block reading on and off; the
scans (regions, headings, problem starts, markers, diagnostics, whether a
block runs open) must be equal.  The texts are the bench corpora, every
Markdown file of the repository, hand-picked traps (a line that could start
another block), and random drafts built from such lines.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.corpus import book_like, dense
from scaling_core import analyze_document
from scaling_core.document.extract import _Extractor
from scaling_core.document.regions import ChunkScan
from scaling_core.document.simple_blocks import closing_line_end
from scaling_core.text import LineIndex

EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))
ROOT = Path(__file__).resolve().parents[2]


def scans(text: str) -> tuple[ChunkScan, ChunkScan]:
    simple = _Extractor(text, LineIndex(text), latex_math=True).run()
    extractor = _Extractor(text, LineIndex(text), latex_math=True)
    extractor.simple_blocks = False
    return simple, extractor.run()


def assert_same_scan(text: str) -> None:
    simple, markdown_it = scans(text)
    for field in ChunkScan.__dataclass_fields__:
        assert getattr(simple, field) == getattr(markdown_it, field), (field, text[:200])


#: Lines that may start, interrupt or continue a block, and plain lines with regions in them.
LINES = [
    "Plain text with `2 * 3 = 6` and about 6 s<!-- ≈ 6 s -->.",
    "x = `1 + 1`",
    "**Question 1 [roofline]:** Is it compute-bound?",
    "**Problem 2:** how long?",
    "*emphasis* then text",
    "_emphasis_ then text",
    "# Heading `1 = 1`",
    "## Section",
    "####### seven",
    "#nospace",
    "#",
    "Title",
    "===",
    "---",
    "- - -",
    "***",
    "* * *",
    "___",
    "- item `1 = 1`",
    "- [ ] task",
    "- **Question 3:** in a list",
    "* star item",
    "+ plus item",
    "-",
    "1. first",
    "2) second",
    "10. tenth",
    "2024 was a year",
    "> quoted `3 = 3`",
    "    indented `4 = 4`",
    "\tindented by a tab",
    "   three spaces",
    "[ref]: https://example.com 'title `5 = 5`'",
    "[link](x) text",
    "<div>",
    "</div>",
    "<!-- calc",
    "y = 2",
    "-->",
    "<!-- problem: p1 -->",
    "<!-- /problem -->",
    "<!-- margin: ignore S004 -->",
    "text <!-- ≈ 3 --> without a number",
    "```calc",
    "```",
    "````",
    "~~~",
    "~~~calc",
    "``` a`b",
    ":::{note}",
    ":::",
    "{% details Click here for the answer. %}",
    "{% enddetails %}",
    "<details><summary>Answer</summary>",
    "</details>",
    "| a | `6 = 6` |",
    "|---|---|",
    "$$x = 1$$ and $y$",
    "\u00a0non-breaking space first",
    "\f form feed",
    "",
    "",
    " ",
    "\t",
]


@pytest.mark.parametrize("name", ["book_like", "dense"])
def test_the_bench_corpora_scan_alike(name: str) -> None:
    text = book_like(3_000) if name == "book_like" else dense(500)
    assert_same_scan(text)


def test_every_markdown_file_of_the_repository_scans_alike() -> None:
    paths = sorted((ROOT / "tests" / "golden").rglob("*.md")) + sorted((ROOT / "docs").rglob("*.md"))
    assert len(paths) > 20
    for path in paths:
        assert_same_scan(path.read_text("utf-8", errors="replace"))


@pytest.mark.parametrize(
    "text",
    [
        "Para one\n\nPara two\n",
        "Title\n===\n\ntext\n",
        "Title\n---\n\ntext\n",
        "text\n- item\n",
        "- a\n- b\n\n- c\n",
        "- a\n  continued\n",
        "- a\n* b\n",
        "[ref]: /url\n\ntext `1 = 1`\n",
        "```calc\nx = 1\n\ny = 2\n```\n\nafter `x = 1`\n",
        "```calc\nx = 1\n\nnot closed\n",
        "~~~\n```\n~~~\n\ntext\n",
        "``` a`b\ntext\n```\n",
        "<!--\n\ncomment over a blank line `1 = 1`\n\n-->\n\ntext\n",
        "<!-- calc\nx = 1\n\ny = 2\n-->\n\nabout 2<!-- ≈ y -->\n",
        ":::{note}\ntext\n\nmore `2 = 2`\n:::\n\nafter\n",
        "---\ntitle: x\n\nmore: y\n---\n\ntext `1 = 1`\n",
        "# Head\ntext under it\n",
        "# Head\n- item\n",
        "## Head\n\n**Question 1:** q\n\n# Top\n\n**Question 2:** r\n",
        "text\n    indented continuation\n",
        "text\n\n    code `1 = 1`\n",
        "```\n```\n```\n",
    ],
)
def test_traps_scan_alike(text: str) -> None:
    assert_same_scan(text)


@settings(max_examples=EXAMPLES or 300, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=30))
def test_random_drafts_scan_alike(lines: list[str]) -> None:
    assert_same_scan("\n".join(lines) + "\n")


def test_an_analysis_reads_simple_blocks_as_before() -> None:
    text = "# T\n\n```calc\nt = 2 s\n```\n\nIt takes 2 s<!-- ≈ t -->, and `t * 2 = 4 s`.\n\n- a list with `t + 1 s = 3 s`\n"
    analysis = analyze_document(text, "x.md")
    assert [c.status for c in analysis.checks] == ["pass", "pass", "pass"]
    assert analysis.headings == [(0, 1)]


@settings(max_examples=int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0")) or 500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["```", "````", "~~~", "   ```", "    ```", " ``` \t", "```x", "`", " ", "\t", "\n", "\r\n", "a", "x = 1"]
        ),
        max_size=30,
    ).map("".join),  # fmt: skip
    st.sampled_from([("`", 3), ("`", 4), ("~", 3)]),
)
def test_the_closing_line_is_the_one_commonmark_reads(text: str, fence: tuple[str, int]) -> None:
    character, length = fence
    reference = re.compile(rf"^ {{0,3}}{re.escape(character)}{{{length},}}[ \t]*$", re.M).search(text)
    assert closing_line_end(text, character, length, 0) == (reference.end() if reference else None)
