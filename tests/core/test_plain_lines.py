"""Plain calc lines read straight into trees (``expr/plain_lines.py``) give exactly what the lexer and parser give.

Each text is read both ways: whenever the plain reading does not give up, its
statements (or claim expression and tolerance) must equal the general
reading's, and the general reading must have found no problem.  The texts are
hand-picked traps, every calc line, claim and ``{calc}`` role of the bench
corpora and of the repository's Markdown files, generated calc statements
(``tests/fuzz/calc_grammar.py``) and random soups of the pieces plain lines
are made of.  Whole analyses with the plain reading on and off must be equal too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.corpus import book_like, dense
from scaling_core import analyze_document
from scaling_core.expr import parse_memo
from scaling_core.expr import syntax as ast
from scaling_core.expr.chain import read_code_span
from scaling_core.expr.lexer import tokenize, tokenize_lines
from scaling_core.expr.parse_memo import ParseMemo
from scaling_core.expr.parser import parse_claim_expression, parse_statements
from scaling_core.expr.plain_lines import read_plain_block, read_plain_chain, read_plain_claim, read_plain_text
from scaling_core.expr.plain_pieces import NotPlain, line_pieces, scanned_pieces
from scaling_core.units.registry import default_registry
from tests.conftest import compiled
from tests.core.test_parse_memo import full
from tests.fuzz.calc_grammar import statements

ROOT = Path(__file__).resolve().parents[2]
IS_UNIT = default_registry().__contains__

TRAPS = [
    "x = 1", "x = 4 * D", "x = -3", "x = --3 GB", "x = 2 * -b", "x = +a", "x = 70B", "x = 3.48M", "x = 8k tokens",
    "x = 1_000", "x = 1_", "x = .5", "x = 5.", "x = 1e3", "x = 1E-3 s", "x = 188us", "x = 1e", "x = 70Bx",
    "x = 4 GB/s", "x = 4 GB / s", "x = 4 GB/x", "x = 4 GB/ s", "x = 4 GB /s", "x = 1 byte/FLOP", "x = 2 kW·h",
    "x = 2 kW · h", "x = 3 %", "x = 40%", "x = a %", "x = (a) %", "x = (a + b) GB", "x = (1 GiB -> GB)",
    "x = (a", "x = a)", "x = (a)(b)", "x = a.b(c)", "x = f(a)", "x = a.b", "x = a.b.c GB", "x = 5 .x",
    "x = a.", "x = a.1", "x = D * F byte", "x = D * F B", "x = F GB", "x = 8 x 128", "x = 8 x", "x = a x 5",
    "x = 2 nosuchunit", "x = 2 GB.x", "x = 2 GB(3)", "x = GB", "x = GB + 1", "x = a b", "x = a = b",
    "x = a ≈ b", "x == 1", "x ≈ 2.1 us ± 5%", "x ≈ 2.1 us +- 5%", "x ≈ 2.1 us ± 2 ms", "x ≈ 2 ± 5 percent",
    "x ≈ 2 ±", "x <= 3", "x >= 3", "x ~= 3", "x < 3", "x ≥ 3", "x ≤ 3", "x ≈ 3 -> GB", "x -> GB", "x -> %",
    "x -> 3", "x ->", "a.b -> GB/s", "x = a -> GB/s", "x = a -> GB / s", "x = a -> GB/nosuch", "1 + 2",
    "a.b = 3", "x =- 3", "x = a+-b", "x = a**2", "x = a^2", "x = s²", "x = a, b", "x = [1]", "x = bf16[8]",
    'import "x.md"', "x = 1 # comment", "# only a comment", "   ", "", "x = 1   ", "  x = 1", "x\t= 1",
    "x = 1\u00a0", "x = $", "x = é + ü", "日本 = 3", "x = a·b", "x = a × b ÷ c − d", "x = a⋅b",
    "x = a → GB", "x = 2 * 8192 * 32768", "x = 1.7e7 / 9e10 -> us", "x = " + "-" * 70 + "1",
    "x = " + "(" * 70 + "1" + ")" * 70, "x = 1 GB + 1 s", "x = 1 s/h/ms", "x = 2 * (3 + 4) * 5 GB",
]  # fmt: skip
PIECES = ["x", "a", "b", "GB", "s", "ms", "byte", "FLOP", "%", "1", "8", "1.5", "70B", "2k", ".", "=", "==", "≈",
          "±", "+-", "->", "→", "+", "-", "−", "*", "×", "/", "÷", "·", "(", ")", " ", " ", "#c", "**", ",",
          "<=", "x"]  # fmt: skip


def general_block(text: str, lines: Any, end: int, following: int | None, contiguous: bool | None) -> tuple[Any, ...]:
    tokens, problems = tokenize_lines(text, lines, end, following=following, contiguous=contiguous)
    return (problems, *parse_statements(tokens, IS_UNIT))


def assert_line_read_alike(line: str, base: int = 11) -> bool:
    """Whether the line was plain; if it was, the readings are equal (as a line, a role and a claim)."""
    plain = read_plain_text(line, base, IS_UNIT)
    if plain is not None:
        tokens, problems = tokenize(line, base)
        assert (problems, *parse_statements(tokens, IS_UNIT)) == ([], plain, []), line
    claim = read_plain_claim(line, base, IS_UNIT)
    if claim is not None:
        tokens, problems = tokenize(line, base)
        assert (problems, *parse_claim_expression(tokens, IS_UNIT)) == ([], *claim, None), line
    return plain is not None


def test_hand_picked_lines() -> None:
    plain = [line for line in TRAPS if assert_line_read_alike(line)]
    # The common shapes are read plainly (the comparison above is not vacuous).
    assert {"x = 4 * D", "x = 4 GB/s", "x ≈ 2.1 us ± 5%", "x = (1 GiB -> GB)", "x = D * F byte"} <= set(plain)
    assert "x = 8 x 128" not in plain and "x = f(a)" not in plain and "x = 2 nosuchunit" not in plain


def test_blocks_of_lines_however_they_lie() -> None:
    lines = ["a = 1", "b = a * 2 GB", "", "# c", "b ≈ 2 GB"]
    for separator in ("\n", "\r", "\r\n", "\n> ", "  "):
        text = "```calc\n" + separator.join(lines) + "\n```\n"
        offsets, at = [], 8
        for line in lines:
            offsets.append((at, line))
            at += len(line) + len(separator)
        end = at - len(separator)
        for following in (None, offsets[-1][0] + len(lines[-1]) + 1):
            for contiguous in (None, True, False):
                for count in range(1, len(offsets) + 1):
                    piece = offsets[:count]
                    plain = read_plain_block(text, piece, following=following, contiguous=contiguous, is_unit=IS_UNIT)
                    if plain is not None:
                        general = general_block(text, piece, end, following, contiguous)
                        assert general == ([], plain, []), (separator, following, contiguous, count)
    # A run of text that is not the lines (a block quote read as one run) is read the general way.
    text = "a = 1\n> b = 2\n"
    assert (
        read_plain_block(text, [(0, "a = 1"), (8, "b = 2")], following=None, contiguous=True, is_unit=IS_UNIT) is None
    )
    assert (
        read_plain_block(text, [(0, "a = 1"), (6, "b = 2")], following=None, contiguous=None, is_unit=IS_UNIT) is None
    )


def recorded_reads(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """Every block, claim, role and code span the analyses of ``texts`` read, as the memo is asked for them."""
    blocks: list[Any] = []
    claims: list[Any] = []
    roles: list[Any] = []
    spans: list[Any] = []
    block, claim, inline, code_span = ParseMemo.block, ParseMemo.claim, ParseMemo.inline, ParseMemo.code_span

    def record_block(
        memo: ParseMemo, text: str, lines: Any, end: int, following: Any = None, contiguous: Any = None
    ) -> Any:
        blocks.append((text, list(lines), end, following, contiguous))
        return block(memo, text, lines, end, following, contiguous)

    def record_claim(memo: ParseMemo, text: str, base: int) -> Any:
        claims.append((text, base))
        return claim(memo, text, base)

    def record_inline(memo: ParseMemo, text: str, base: int) -> Any:
        roles.append((text, base))
        return inline(memo, text, base)

    def record_code_span(memo: ParseMemo, text: str, base: int) -> Any:
        spans.append((text, base))
        return code_span(memo, text, base)

    with monkeypatch.context() as patch:
        patch.setattr(ParseMemo, "block", record_block)
        patch.setattr(ParseMemo, "claim", record_claim)
        patch.setattr(ParseMemo, "inline", record_inline)
        patch.setattr(ParseMemo, "code_span", record_code_span)
        for text in texts:
            analyze_document(text, "draft.md")
    return blocks, claims, roles, spans


@pytest.mark.skipif(
    compiled(parse_memo),
    reason="records the reads by patching ParseMemo's methods, which compiled callers never look up; "
    "the pure-Python run reads the same texts",
)
def test_every_calc_block_claim_and_role_of_the_corpora_and_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    long_block = "```calc\n" + "".join(f"x{i % 7} = {i % 5} * 2 ms\nx{i % 7} == {i % 5 * 2} ms\n" for i in range(300))
    quoted = long_block.replace("\n", "\n> ")  # lines that are not one run of text
    texts = [book_like(1_500), dense(300), long_block + "```\n", "> " + quoted + "```\n"]
    for folder in ("examples", "docs", "tests/golden"):
        texts += [path.read_text("utf-8", errors="replace") for path in sorted((ROOT / folder).rglob("*.md"))]
    blocks, claims, roles, spans = recorded_reads(texts, monkeypatch)
    plain_blocks = 0
    plain_kinds = set()
    for text, lines, end, following, contiguous in blocks:
        plain = read_plain_block(text, lines, following=following, contiguous=contiguous, is_unit=IS_UNIT)
        if plain is not None:
            plain_blocks += 1
            plain_kinds.add((following is not None, contiguous))
            assert general_block(text, lines, end, following, contiguous) == ([], plain, []), lines
        for offset, line in lines:
            assert_line_read_alike(line, offset)
    plain_claims = sum(assert_line_read_alike(text, base) or read_plain_claim(text, base, IS_UNIT) is not None
                       for text, base in claims)  # fmt: skip
    for text, base in roles:
        assert_line_read_alike(text, base)
    plain_spans = sum(assert_code_span_read_alike(text, base) for text, base in spans)
    assert plain_spans > len(spans) // 2, (plain_spans, len(spans))  # the plain chain reading is taken
    assert plain_blocks > len(blocks) // 2 and plain_claims > len(claims) // 2  # the fast paths are taken
    assert {(False, None), (True, True), (True, False)} <= plain_kinds  # whole blocks, and pieces of long ones


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(statements(), st.integers(0, 500))
def test_generated_statements(statement: str, base: int) -> None:
    for line in statement.splitlines() or [""]:
        assert_line_read_alike(line, base)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.sampled_from(["", "x = ", "x ≈ ", "  "]))
def test_random_soups_of_plain_pieces(pieces: list[str], start: str) -> None:
    assert_line_read_alike(start + "".join(pieces))
    assert_line_read_alike(start + " ".join(pieces))


def test_analyses_are_the_same_with_plain_lines_off(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [book_like(600), dense(80), "```calc\n" + "\n".join(TRAPS) + "\n```\n"]
    texts += [path.read_text("utf-8", errors="replace") for path in sorted((ROOT / "examples").rglob("*.md"))]
    for text in texts:
        plain = full(analyze_document(text, "draft.md"))
        with monkeypatch.context() as patch:
            patch.setattr(ParseMemo, "plain_lines", False)
            general = full(analyze_document(text, "draft.md"))
        assert plain == general


def test_a_plain_tree_is_an_ordinary_tree() -> None:
    read = read_plain_text("t = 2 * B / h100.flops_bf16 -> us", 5, IS_UNIT)
    assert read is not None and len(read) == 1
    statement = read[0]
    assert isinstance(statement, ast.Definition) and statement.span == (5, 38) and statement.name_span == (5, 6)
    assert isinstance(statement.expr, ast.Binary) and isinstance(statement.expr.right, ast.Field)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(PIECES), st.sampled_from(["  ", "_", "1_0", "é", "\t", "x2", "2x", "5k", "·b", "x²", "²", "١", "a·b"])),
             max_size=14),
    st.sampled_from(["", " ", "-"]), st.integers(0, 50),
)  # fmt: skip
def test_the_word_fast_path_gives_the_token_patterns_pieces(words: list[str], joiner: str, base: int) -> None:
    for line in (joiner.join(words).rstrip(" "), " ".join(words).rstrip(" ")):  # callers strip trailing spaces
        assert _pieces_or_not(line_pieces, line, base) == _pieces_or_not(scanned_pieces, line, base), line


def _pieces_or_not(read: Any, line: str, base: int) -> Any:
    try:
        return read(line, base)
    except NotPlain:
        return "not plain"


def assert_code_span_read_alike(text: str, base: int = 11) -> bool:
    """A code span's equations are the same read plain or generally; whether one was read plain."""
    plain = read_code_span(text, base, IS_UNIT)
    assert plain == read_code_span(text, base, IS_UNIT, plain=False), text
    return any(read_plain_chain(piece.strip(), base, IS_UNIT) is not None for piece in text.split(";"))


CHAIN_TRAPS = [
    "2 * 3 = 6", "2*3=6", "2 * 3 = 6 = 6.0", "a = 5", "x = 5", "2 * 8192 * 32768 = 5.4e8 ≈ 5e8", "1 GB / 2 s = 0.5 GB/s",
    "2 * 3 ≈ 6 ± 5%", "2 * 3 = 6 ± 5% = 6", "2 * 3 ~= 6", "2 * 3 ~ 6", "2 * 3 == 6", "2 * 3 <= 6", "2 * 3 < 7",
    "= 6", "2 * 3 =", "2 * 3 = = 6", "(2 = 3)", "(2 * 3) = 6", "2 * (3 = 6)", "f(2) = 4", "bf16[8] = 16 byte",
    "2 * nosuch = 4", "2 x 3 = 6", "2 * 3 -> GB = 6", "2 GB -> MB = 2000 MB", "x += 1", "2 ** 3 = 8", "-3 = -3",
    "2 * 3 = (6)", "2 * 3 = -6", "a.b = 3", "tpu_v5e.hbm = 16 GiB", "1.97e14 / 8.2e11 = 240", "3 % = 0.03",
    "64 * 1024 = 64kB. 64e3 / 4.5e10 = 1.4us", "2 * 3 = 6; 2 * 4 = 8", "2 * 3 = 6 # note", "2 * 3 = 6   ",
]  # fmt: skip


def test_hand_picked_code_spans() -> None:
    taken = sum(assert_code_span_read_alike(text) for text in CHAIN_TRAPS)
    assert taken > len(CHAIN_TRAPS) // 3  # the plain chain reading is taken


@settings(max_examples=int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0")) or 400, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map(" ".join), min_size=1, max_size=4),
    st.lists(st.sampled_from(["=", " = ", "≈", " ~= ", " ~ ", " == ", " <= ", "="]), min_size=3, max_size=3),
)
def test_random_chains_of_plain_pieces(links: list[str], relations: list[str]) -> None:  # fmt: skip
    text = links[0] + "".join(relation + link for relation, link in zip(relations, links[1:]))
    assert_code_span_read_alike(text)
