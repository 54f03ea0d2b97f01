"""Malformed and adversarial input: diagnostics, never an exception or a hang."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import analyze_document
from tests.conftest import analyze, codes

FRAGMENTS = [
    "```calc\n", "```\n", "<!-- calc\n", "-->\n", "<!-- ≈ t -->", "<!-- problem: p -->", "<!-- /problem -->",
    "**Question 1 [x]:** ", "# H\n", "## H2\n", "`2 * 3 = 6`", "`1.7e7 / 9e10 = 188us`", "{calc}`t`", "22 days",
    "t = 1.7e7 byte / (9e10 byte/s)\n", "x = [1, 2,\n", "10**10**10\n", "(((((", ")))", "1 GB + 1 s\n", "± 5%",
    "h100.", "bf16[8, 128]", "import \"x.md\"\n", "🚀", "中文", "\u2028", "\r\n", "\r", "\n", "> ", "- ", "µs", "÷",
    "<details>", "</details>", "{% details a %}", "{% enddetails %}", "<!-- margin: off -->", "# margin: ignore\n",
    "`", "``", "\t", "\x00", "é", "≈", "->", "=", "1e400", "0/0", "range(1e12)\n", "sqrt(-1)\n",
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40))
def test_any_document_analyses_without_exceptions_and_with_valid_spans(pieces: list[str]) -> None:
    text = "".join(pieces)
    first = analyze_document(text, "fuzz.md")
    for diagnostic in first.diagnostics:
        assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(text)
        for related in diagnostic.related:
            assert 0 <= related.span.start <= related.span.end <= len(text)
        for fix in diagnostic.fixes:
            assert 0 <= fix.span.start <= fix.span.end <= len(text)
    for item in [*first.values, *first.checks]:
        assert 0 <= item.span.start <= item.span.end <= len(text)
    second = analyze_document(text, "fuzz.md")
    assert [(d.code, d.span, d.message) for d in first.diagnostics] == [
        (d.code, d.span, d.message) for d in second.diagnostics
    ]


def test_unterminated_blocks_still_evaluate() -> None:
    doc = analyze("```calc\nx = 6 * 7\nx == 42\n")
    assert codes(doc) == ["S002"]
    assert [c.status for c in doc.checks] == ["pass"]


def test_garbage_in_a_calc_block_is_reported_per_line() -> None:
    doc = analyze("```calc\n$$$ ??? !!!\nx = 1\n@@@\n```\n")
    assert set(codes(doc)) <= {"S001", "S003"}
    assert [v.name for v in doc.values] == ["x"]


def test_huge_exponent_towers_and_sweeps_finish_quickly() -> None:
    text = "```calc\n" + "10**10**10**10**10\n" * 50 + "range(1e9)\n" * 50 + "x = [" + "1, " * 10000 + "1]\n```\n"
    start = time.perf_counter()
    doc = analyze(text)
    assert time.perf_counter() - start < 5
    assert codes(doc).count("E002") == 50 and codes(doc).count("E003") == 50


def test_sweep_limit_is_configurable() -> None:
    assert codes(analyze("```calc\nrange(100)\n```", max_array_elements=10)) == ["E003"]


def test_pathological_markdown_is_linear_enough() -> None:
    text = "*_" * 20000 + "\n" + "`" * 5000 + "\n" + "[" * 20000 + "\n" + "<!--" * 5000
    start = time.perf_counter()
    analyze(text)
    assert time.perf_counter() - start < 10
