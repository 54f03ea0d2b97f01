"""Region extraction: exact spans in code points, with CRLF, emoji and containers."""

from __future__ import annotations

import os
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from scaling_core.document import inline_scan
from scaling_core.document.extract import extract
from scaling_core.document.prose import TRAILING_NUMBER
from scaling_core.document.regions import CalcRegion, ClaimRegion, CodeSpanRegion, MathRegion, may_check
from scaling_core.text import LineIndex
from tests.conftest import analyze, codes, statuses


def test_line_index_honours_only_lsp_line_breaks() -> None:
    index = LineIndex("a\r\nb\rc\nd\u2028e")
    assert index.line_count == 4
    assert index.line_text(3) == "d\u2028e"
    assert index.position(index.offset(1, 0)) == (1, 0)
    assert index.line_text(0) == "a"


@given(st.text(alphabet="ab\n\r\u2028\u0085é🚀", max_size=40))
def test_line_starts_follow_the_three_lsp_line_breaks(text: str) -> None:
    expected = [0] + [i + 1 for i, c in enumerate(text) if c == "\n" or (c == "\r" and text[i + 1 : i + 2] != "\n")]
    assert list(LineIndex(text).line_starts) == expected


@given(st.text(alphabet="ab\n\r", max_size=40))
def test_line_index_answers_like_a_scan_of_its_lines(text: str) -> None:
    index = LineIndex(text)
    starts = list(index.line_starts)
    for offset in range(len(text) + 1):
        line = max(n for n, start in enumerate(starts) if start <= offset)
        assert index.position(offset) == (line, offset - starts[line])
        assert index.line_start_at(offset) == starts[line]
    assert [index.line_start(n) for n in range(index.line_count)] == starts


def test_a_long_drafts_line_index_takes_4_bytes_a_line() -> None:
    import tracemalloc

    text = "line of text\n" * 800_000
    tracemalloc.start()
    try:
        index = LineIndex(text)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert index.line_count == 800_001 and index.position(13 * 400_000 + 3) == (400_000, 3)
    assert held < 5 * 800_001  # a list of ints held ~40 bytes a line (a 20 MB draft's: ~17 MB)


def test_claim_span_is_the_prose_number_with_its_unit_and_emphasis_is_skipped() -> None:
    text = "速度 🚀 takes **22 days**<!-- ≈ t --> total"
    (claim,) = [r for r in extract(text).regions if isinstance(r, ClaimRegion)]
    assert text[claim.number_span.start : claim.number_span.end] == "22 days"
    assert claim.op == "≈" and claim.expr_text.strip() == "t"


def test_a_claims_parts_lie_where_its_text_has_them_and_move_with_it() -> None:
    """A claim keeps where its parts lie from its number's start: each span it gives, moved with it or not, is the
    text of that part."""
    from scaling_core.document.shift import shift_region

    text = "It takes **22 days/step**<!--   ≈ t_total * 2 --> in all, and 5<!--= 5--> once."
    claims = [r for r in extract(text).regions if isinstance(r, ClaimRegion)]
    for delta in (0, 7, 300):
        moved_text = "x" * delta + text
        parts = []
        for claim in claims:
            moved = shift_region(claim, delta)
            assert isinstance(moved, ClaimRegion) and moved.start == claim.start + delta
            unit = moved.unit_span
            parts.append((
                moved_text[slice(*moved.number_span)], None if unit is None else moved_text[slice(*unit)],
                moved_text[slice(*moved.op_span)], moved_text[moved.expr_offset : moved.marker_span.end],
                moved_text[slice(*moved.marker_span)], moved_text[moved.start : moved.end],
            ))  # fmt: skip
        assert parts == [
            ("22 days/step", "days/step", "≈", " t_total * 2 -->", "<!--   ≈ t_total * 2 -->",
             "22 days/step**<!--   ≈ t_total * 2 -->"),
            ("5", None, "=", " 5-->", "<!--= 5-->", "5<!--= 5-->"),
        ]  # fmt: skip


def test_prose_numbers_as_authors_write_them() -> None:
    cases = {
        "32,000<!-- = 32000 -->": "pass",
        "21.7%<!-- = 0.217 -->": "pass",
        "3.5×10^6<!-- = 3.5e6 -->": "pass",
        "16 KiB<!-- = 16384 byte -->": "pass",
        "6 μs<!-- = 6e-6 s -->": "pass",
        "1.2 TB/s<!-- = 1.2e12 byte/s -->": "pass",
        "435 years<!-- ≈ 1.373e10 s -->": "pass",
        "1.6e14<!-- = 1.6e14 -->": "pass",
        "70B<!-- = 7e10 -->": "pass",
        "1.5 trillion<!-- = 1.5e12 -->": "pass",
    }
    for text, expected in cases.items():
        doc = analyze(f"The value is {text}.")
        assert statuses(doc) == [expected], (text, doc.diagnostics)


def test_crlf_spans_land_on_the_right_text() -> None:
    text = "# T\r\n\r\n```calc\r\nx = 1 +\r\n```\r\n\r\nSee `2 * 3 = 7`.\r\n"
    doc = analyze(text)
    spans = {d.code: text[d.span.start : d.span.end] for d in doc.diagnostics}
    assert spans["C001"] == "7"
    assert "S001" in spans


def test_calc_blocks_in_blockquotes_and_lists_keep_exact_offsets() -> None:
    text = "> ```calc\n> x = 40 + 2\n> ```\n\n- item\n\n  ```calc\n  y = x\n  ```\n"
    regions = [r for r in extract(text).regions if isinstance(r, CalcRegion)]
    assert [[line for _, line in r.lines] for r in regions] == [["x = 40 + 2"], ["y = x"]]
    for region in regions:
        for offset, line in region.lines:
            assert text[offset : offset + len(line)] == line


def test_code_spans_and_roles() -> None:
    text = "Use ``a ` b = 1`` and {calc}`t -> days` and `1 + 1 = 2`, not `bf16[8192]`."
    spans = [r for r in extract(text).regions if isinstance(r, CodeSpanRegion)]
    assert [(s.text, s.role) for s in spans] == [("a ` b = 1", False), ("t -> days", True), ("1 + 1 = 2", False)]


def test_an_ordinary_code_span_is_no_region_but_still_code() -> None:
    """A code span that cannot be checked (no role, no ``=``, ``≈`` or ``~``) is not kept as a region, and what it
    holds is still code: LaTeX math in it is no math."""
    text = "The tile `bf16[$a \\approx b$]` is 2<!-- = 2 --> wide, and $x = 1$ is math."
    assert [type(r) for r in extract(text, latex_math=True).regions] == [ClaimRegion, MathRegion]
    doc = analyze(text)
    assert [(c.status, text[c.span.start : c.span.end]) for c in doc.checks] == [("pass", "2")]


def test_code_spans_that_are_not_checks_are_left_alone() -> None:
    text = "`x = 5` `foo(3) = 2` `i = i + 1` `a == b` `2 * unknown = 4` `--flag=3` `print(1)`"
    doc = analyze(text)
    assert doc.checks == []
    # Only the two that look like checked arithmetic say why they are not checked (hints C002).
    hinted = [text[d.span.start : d.span.end] for d in doc.diagnostics if d.code == "C002"]
    assert codes(doc) == ["C002", "C002"] and hinted == ["foo(3)", "2 * unknown"]


def test_code_span_checking_can_be_disabled() -> None:
    assert analyze("`2 * 3 = 7`", code_spans=False).checks == []


def test_fences_other_than_calc_are_ignored() -> None:
    assert analyze("```python\nx = 1 +\n```\n\n```\n1 GB + 1 s\n```\n").diagnostics == []


def test_claims_inside_calc_fences_are_not_claims() -> None:
    doc = analyze("```text\n22 days<!-- ≈ t -->\n```\n")
    assert doc.diagnostics == [] and doc.checks == []


PROSE_PIECES = st.sampled_from([
    "1", "7", "0.13", "1.97e14", "32,000", "3.5", "×10^6", " × 10", "⁶", "e-3", "%", " ", "\u00a0", "\n", "`",
    " µs", " FLOP/s", " per", " second", " million", "B", "k", "x", "5×", "-", "−", "(", ")", "=", "*", "_", "<",
    " is about ", "H100s", "{", "}", "^", ".", ",", "/", "a", "é",
])  # fmt: skip


PROSE_NUMBERS = st.tuples(
    st.sampled_from(["", "-", "−", "+"]),
    st.sampled_from(["1.97e14", "32,000", "3.5", "174", ".5", "7", "1,234.5"]),
    st.sampled_from(["", " × 10^6", "×10^{12}", " x 10⁶", "e-3", "\n× 10^3", " ×10^-2"]),
    st.sampled_from(["", "k", "B", "T"]),
    st.sampled_from(
        [
            "",
            " µs",
            " FLOP/s",
            "%",
            " million",
            " tokens per second",
            "×",
            " H100s",
            "\u00a0GB",
            "% per H100",
            " GB/s per v5e",
        ]
    ),
).map("".join)
PROSE_ENDINGS = st.tuples(st.lists(PROSE_PIECES, max_size=12).map("".join), PROSE_NUMBERS).map("".join)


@settings(max_examples=int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0")) or 500, deadline=None)
@given(st.one_of(st.lists(PROSE_PIECES, max_size=24).map("".join), PROSE_ENDINGS))
def test_the_trailing_number_search_finds_what_a_search_near_the_last_digit_finds(text: str) -> None:
    """Starting after a character no number holds (a backtick, a bracket) changes nothing, only the time."""
    last_digit = re.compile(r"\d(?=\D*$)").search(text, max(0, len(text) - 48))
    expected = None if last_digit is None else TRAILING_NUMBER.search(text, max(0, last_digit.start() - 40))
    found = inline_scan._trailing_number(text)
    assert (found and (found.span(), found.groupdict())) == (expected and (expected.span(), expected.groupdict()))


def _code_spans_by_pattern(chunk: str) -> list[tuple[int, int, int, str, bool]]:
    """The one-line code spans of ``chunk`` found with CommonMark's rule as two patterns: the plain reading."""
    found, position = [], 0
    while (opener := re.compile(r"`+").search(chunk, position)) is not None:
        count = len(opener.group())
        closer = re.compile(r"(?<!`)" + "`" * count + r"(?!`)").search(chunk, opener.end())
        if closer is None:
            position = opener.end()
            continue
        content = chunk[opener.end() : closer.start()]
        role = chunk[: opener.start()].endswith("{calc}")
        if "\n" not in content and "\r" not in content and content.strip(" "):
            lead = len(content) - len(content.lstrip(" "))
            found.append((opener.start() - 6 * role, closer.end(), opener.end() + lead, content.strip(" "), role))
        position = closer.end()
    return found


@settings(max_examples=int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0")) or 500, deadline=None)
@given(st.lists(st.sampled_from(["`", "``", "```", " ", "x", "{calc}", "\n", "\r", "2 = 2", "é"]), max_size=30))
def test_code_spans_are_found_as_commonmarks_rule_finds_them(pieces: list[str]) -> None:
    """The scanner's lone-backtick search finds what the two patterns of the rule find, at the same offsets."""
    chunk = "".join(pieces)
    scanner = inline_scan.InlineScanner(chunk, LineIndex(chunk))
    expected = _code_spans_by_pattern(chunk)
    assert scanner.code_spans(chunk, 7) == [(start, end) for start, end, *_ in expected]
    kept = [(s.span.start - 7, s.span.end - 7, s.content_span.start - 7, s.text, s.role) for s in scanner.out.regions]
    assert kept == [span for span in expected if span[4] or may_check(span[3])]
