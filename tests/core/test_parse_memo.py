"""Texts read once are not lexed and parsed again (``expr/parse_memo.py``), and reusing them changes nothing.

Each draft is analysed twice, with the memo on and off; everything the
analysis reports (syntax trees of values included) must be equal.  The
drafts repeat code spans, claims, ``{calc}`` roles and calc blocks at other
offsets, with lexer and parser errors among them, inside block quotes
(lines not one run of text) and in long blocks read in pieces.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.corpus import book_like, dense
from scaling_core import DocumentAnalysis, analyze_document
from scaling_core.document.written import value_expression
from scaling_core.expr import parse_memo
from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parse_memo import rebased
from scaling_core.expr.parser import parse_statements
from tests.core.test_incremental import observable
from tests.core.test_robustness import FRAGMENTS

ROOT = Path(__file__).resolve().parents[2]

REPEATS = """# Repeats

```calc
B = 128
t = 2 * B * 8192 / h100.flops_bf16 -> us
w = 3 GBx + (1
v = 2 *
t ≈ 0.01 us ± 5%
```

`2 * 3 = 6`, `2 * 3 $ = 6`, `2 * nosuch = 4`, `B * 2 = 256 ≈ 250 ± 10%`, {calc}`t -> ns`, about 2 us<!-- ≈ t * 1 sceond -->,
2.1e-3 us<!-- ≈ 2 * B * 8192 / h100.flops_bf16 ± 1% -->, 7 days<!-- = days -->, 5<!-- = 2 + -->.

> ```calc
> B = 128
> t = 2 * B * 8192 / h100.flops_bf16 -> us
> w = 3 GBx + (1
> v = 2 *
v = 2 *
> t ≈ 0.01 us ± 5%
> ```

Again: `2 * 3 = 6`, `2 * 3 $ = 6`, `2 * nosuch = 4`, `B * 2 = 256 ≈ 250 ± 10%`, {calc}`t -> ns`, about 2 us<!-- ≈ t * 1 sceond -->,
2.1e-3 us<!-- ≈ 2 * B * 8192 / h100.flops_bf16 ± 1% -->, 7 days<!-- = days -->, 5<!-- = 2 + -->.

```calc
B = 128
t = 2 * B * 8192 / h100.flops_bf16 -> us
w = 3 GBx + (1
v = 2 *
t ≈ 0.01 us ± 5%
```
"""


def full(analysis: DocumentAnalysis) -> tuple:
    """What :func:`observable` compares, with each value's expression (read again where it is written) and each
    check's left name."""
    seen = list(observable(analysis))
    seen[4] = [(*binding[:3], _no_id(binding[3])) for binding in seen[4]]
    return (
        seen,
        [value_expression(analysis, v) for v in analysis.values],
        [(c.span, c.left) for c in analysis.checks],
    )


def _no_id(stamp: object) -> object:
    """A record's fingerprint names the record object (its ``id``), which differs between any two analyses."""
    return stamp[:2] if isinstance(stamp, tuple) and stamp[:1] == ("record",) else stamp


def assert_memo_changes_nothing(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_memo = full(analyze_document(text, "draft.md"))
    with monkeypatch.context() as patch:
        patch.setattr(parse_memo, "MAX_TEXT", -1)  # nothing is short enough to keep: every text is read afresh
        without = full(analyze_document(text, "draft.md"))
    assert with_memo == without


def test_repeated_texts_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    read = parse_memo.read_code_span

    def counting(text: str, base: int, is_unit: Any, **options: Any) -> Any:
        calls.append(text)
        return read(text, base, is_unit, **options)

    monkeypatch.setattr(parse_memo, "read_code_span", counting)
    analysis = analyze_document("`2 * 3 = 6` and `2 * 3 = 6`.\n\nAgain `2 * 3 = 6`, and `2 * 4 = 8`.\n", "draft.md")
    assert calls == ["2 * 3 = 6", "2 * 4 = 8"]
    assert [c.status for c in analysis.checks] == ["pass"] * 4
    assert [analysis.text[c.span.start : c.span.end] for c in analysis.checks] == ["2 * 3 = 6"] * 3 + ["2 * 4 = 8"]


def test_repeats_at_other_offsets_report_as_read_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    analysis = analyze_document(REPEATS, "draft.md")
    assert {d.code for d in analysis.diagnostics} >= {"S001", "N002", "C002", "N001"}
    for diagnostic in analysis.diagnostics:  # each repeat's findings point into its own text
        assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(REPEATS)
    assert_memo_changes_nothing(REPEATS, monkeypatch)


def test_long_blocks_read_in_pieces_and_the_bench_drafts(monkeypatch: pytest.MonkeyPatch) -> None:
    block = "```calc\n" + "".join(f"x{i % 7} = {i % 5} * 2 ms\nx{i % 7} == {i % 5 * 2} ms\n" for i in range(300))
    assert_memo_changes_nothing(block + "```\n\n" + block + "```\n", monkeypatch)
    assert_memo_changes_nothing(book_like(600), monkeypatch)
    assert_memo_changes_nothing(dense(80), monkeypatch)


def test_every_markdown_file_of_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("examples", "docs", "tests/golden"):
        for path in sorted((ROOT / folder).rglob("*.md")):
            assert_memo_changes_nothing(path.read_text("utf-8", errors="replace"), monkeypatch)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=30))
def test_random_drafts_repeated(monkeypatch: pytest.MonkeyPatch, pieces: list[str]) -> None:
    text = "".join(pieces)
    assert_memo_changes_nothing(text + "\n\n" + text + "\n\n> " + text, monkeypatch)


def test_a_moved_tree_is_the_tree_read_there() -> None:
    text = 'x = -f(a.b, [1, 2], bf16[8, 128], (1 GiB -> GB), t["2x2"]) ** 2 + 3 s/h -> ms\ny ≈ 1 + 2 + 3 ± 2 ms\n'
    statements, problems = parse_statements(tokenize(text, 0)[0], lambda s: s in ("s", "h", "ms", "GiB", "GB"))
    assert not problems and isinstance(statements[1], ast.Check)
    moved, _ = parse_statements(tokenize(text, 1234)[0], lambda s: s in ("s", "h", "ms", "GiB", "GB"))
    assert [rebased(s, 1234) for s in statements] == moved
    assert rebased(statements[0], 0) is statements[0]


def test_a_full_memo_forgets_its_oldest_entries_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    memo: dict[str, int] = {}
    monkeypatch.setattr(parse_memo, "MAX_ENTRIES", 16)
    monkeypatch.setattr(parse_memo, "MAX_BLOCKS", 8)  # calc blocks have a limit of their own
    for number in range(18):
        parse_memo._keep(memo, f"text {number}", number)
    # Full at the seventeenth: the two oldest (an eighth) went, one at a time; the eighteenth fitted.
    assert list(memo) == [f"text {n}" for n in range(2, 18)]
    blocks_memo: dict[tuple[int], int] = {}
    for number in range(parse_memo.MAX_BLOCKS + 1):
        parse_memo._keep(blocks_memo, (number,), number, parse_memo.MAX_BLOCKS)
    assert len(blocks_memo) == parse_memo.MAX_BLOCKS * 7 // 8 + 1 and (0,) not in blocks_memo
    # A draft with far more distinct texts than the memo holds reads as without a memo.
    spans = "".join(f"`{n} * 2 = {n * 2}` and `{n} + 1 = {n + 1}`, again `{n} * 2 = {n * 2}`.\n\n" for n in range(40))
    blocks = "".join(f"```calc\nx{n} = {n} ms\nx{n} == {n} ms\n```\n\n" for n in range(40))
    assert_memo_changes_nothing(spans + blocks + spans + blocks, monkeypatch)


def test_forget_empties_every_table() -> None:
    memo = parse_memo.ParseMemo(lambda spelling: spelling == "ms")
    memo.code_span("2 * 3 = 6", 0)
    memo.claim("2 * 3", 0)
    memo.block("x = 2 ms\n", [(0, "x = 2 ms")], 9)
    tables = (memo._spans, memo._claims, memo._blocks)
    assert all(tables)
    memo.forget()
    assert not any(tables)


def test_forgetting_offers_the_interpreter_lock_every_few_hundred_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    # Compiled, the loop runs no bytecode: only these sleeps let the language server's event loop in.
    memo = {f"text {n}": n for n in range(1_000)}
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    parse_memo._forget(memo, 900)
    assert list(memo) == [f"text {n}" for n in range(900, 1_000)]
    assert sleeps == [0] * (900 // parse_memo.FORGET_BETWEEN_YIELDS) and len(sleeps) >= 3
