"""Expressions read again from a draft's text (``document/written.py``) are the trees the analysis read."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus import book_like
from scaling_core import analyze_document
from scaling_core.document.derivation import derivation_at
from scaling_core.document.extract import extract
from scaling_core.document.incremental import RegionCache
from scaling_core.document.regions import CalcRegion, CodeSpanRegion
from scaling_core.document.results import DocumentAnalysis
from scaling_core.document.written import value_expression
from scaling_core.expr import syntax as ast
from scaling_core.expr.parse_memo import ParseMemo
from scaling_core.text import Span
from scaling_core.units.registry import default_registry

ROOT = Path(__file__).resolve().parents[2]

#: Calc blocks in a list and in a quote, statements over two lines, an inline value with spaces around it.
NESTED = """\
# Nested

- an item

  ```calc
  a = 2
  x = max(a,
          3) * 2
  y = x + a
  ```

> ```calc
> b = 5 s
> z = max(b,
>   7 s) -> ms
> ```

Inline {calc}`  x * 2 ` here, and {calc}``y`` there; `x * 2 = 12`.
"""


def _trees(text: str) -> dict[Span, ast.Expr]:
    """Each value's expression by its span, as the analysis's reader reads the regions it finds."""
    memo = ParseMemo(lambda spelling: spelling in default_registry())
    trees: dict[Span, ast.Expr] = {}
    for region in extract(text).regions:
        if isinstance(region, CalcRegion):
            statements = memo.block(text, region.lines, region.span.end)[1]
            trees.update((s.span, s.expr) for s in statements if isinstance(s, (ast.Definition, ast.Show)))
        elif isinstance(region, CodeSpanRegion) and region.role:
            statements = memo.inline(region.text, region.content_span.start)[1]
            if len(statements) == 1 and isinstance(statements[0], ast.Show):
                trees[region.span] = statements[0].expr
    return trees


def _read_again(analysis: DocumentAnalysis) -> int:
    """Check that every value's expression read again is the tree the analysis read; how many there were."""
    trees = _trees(analysis.text)
    written = [value for value in analysis.values if value.written]
    for value in written:
        assert value_expression(analysis, value) == trees[value.span], analysis.text[value.span.start : value.span.end]
    return len(written)


def test_nested_blocks_long_statements_and_roles_are_read_again_as_read() -> None:
    analysis = analyze_document(NESTED, "nested.md")
    assert not analysis.diagnostics
    assert _read_again(analysis) == 7  # a, x, y, b, z, and the roles' values
    hovered = derivation_at(analysis, NESTED.index("z = "))
    assert hovered is not None and "= **7000 ms**" in hovered and "`b = 5 s`" in hovered


@pytest.mark.parametrize(
    "path", sorted((ROOT / "examples").rglob("*.md")) + sorted((ROOT / "tests" / "golden").rglob("*.md"))
)
def test_every_value_of_the_examples_and_golden_drafts_is_read_again_as_read(path: Path) -> None:
    _read_again(analyze_document(path.read_text(encoding="utf-8"), path.name))


def test_values_replayed_and_moved_are_read_again_where_they_now_are() -> None:
    text = book_like(600)
    cache = RegionCache()
    analyze_document(text, "book.md", cache=cache)
    moved = "An opening line typed above everything.\n\n" + text
    analysis = analyze_document(moved, "book.md", cache=cache)
    assert cache.reused > 10
    assert _read_again(analysis) > 100


def test_a_value_whose_text_changed_under_it_is_not_derived() -> None:
    analysis = analyze_document("```calc\nx = 2 * 3\n```\n", "d.md")
    (value,) = analysis.values
    stale = DocumentAnalysis.__new__(DocumentAnalysis)
    stale.__dict__.update(analysis.__dict__, text="```calc\nx = 2 *\n```\n")  # not the text it was read from
    assert value_expression(stale, value) is None and derivation_at(stale, value.span.start) is None
