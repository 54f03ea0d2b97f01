"""Numbers and units as real books write them (issue 10, brief A1).

Each test goes through the public engine: a precision read from the number
as written, trailing zeros, thousands separators, ``x`` between numbers,
``kiB``, ``->`` inside parentheses, and a shape compared with a size.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scaling_core import analyze_document
from scaling_core.document.results import DocumentAnalysis
from scaling_core.expr.compare import last_digit_unit
from scaling_core.units.registry import default_registry


def _analyze(text: str) -> DocumentAnalysis:
    return analyze_document(text, "x.md")


def _span(content: str) -> DocumentAnalysis:
    """A paragraph holding one code span."""
    return _analyze(f"It is `{content}` here.\n")


def _statuses(analysis: DocumentAnalysis) -> list[str]:
    return [str(check.status) for check in analysis.checks]


def _codes(analysis: DocumentAnalysis) -> list[str]:
    return [d.code for d in analysis.diagnostics]


def _calc(body: str) -> DocumentAnalysis:
    return _analyze(f"```calc\n{body}\n```\n")


# -- 1. the precision of a claim is its number's own ---------------------------------------------
@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("50 / .026 = 1923 tokens / sec", "pass"),
        ("50 / .026 = 1925 tokens / sec", "fail"),
        ("8.4e9 / 2.01 = 4.2GB / sequence", "pass"),
        ("8.4e9 / 2 = 4.5GB / sequence", "fail"),
        ("50 / .026 = 1923 tokens/sec", "pass"),
        ("3.6e12 / 2 = 1.8 TB / s", "pass"),
    ],
)
def test_a_unit_written_with_spaces_keeps_the_numbers_precision(span: str, status: str) -> None:
    assert _statuses(_span(span)) == [status]


def test_a_calc_check_reads_the_precision_of_its_number_before_a_spaced_unit() -> None:
    analysis = _calc("x = 50 / .026\nx == 1923 tokens / sec\nx == 1925 tokens / sec")
    assert _statuses(analysis) == ["pass", "fail"]


def test_a_number_divided_by_a_defined_name_is_not_a_printed_precision() -> None:
    # `1923 / n` is an expression, not a number with a unit: compared exactly, as before.
    analysis = _calc("n = 1.001\nx = 1923 / 1.001\nx == 1923 / n\nx == 1923.4 / n")
    assert _statuses(analysis) == ["pass", "fail"]


# -- 2. trailing zeros of an integer are not significant ----------------------------------------
@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("140", 10.0),
        ("600", 100.0),
        ("1,680", 10.0),
        ("32,000", 1000.0),
        ("140.", 1.0),
        ("140.0", 0.1),
        ("0", 1.0),
        ("0.0", 0.1),
        ("188", 1.0),
        ("1.7e7", 1e6),
        ("400e12", 1e14),
        ("1_000", 1000.0),
        ("0.50", 0.01),
    ],
)
def test_last_digit_unit_ignores_an_integers_trailing_zeros(text: str, unit: float) -> None:
    assert last_digit_unit(text) == pytest.approx(unit)


@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("3 * 1050 * 4096 / 9e10 = 140us", "pass"),
        ("3 * 1050 * 4096 / 9e10 = 140.0us", "fail"),
        ("3 * 1050 * 4096 / 9e10 = 140.us", "fail"),
        ("5.508e10 / 9e10 = 600ms", "pass"),
        ("5.508e10 / 9e10 = 600.0ms", "fail"),
        ("5.508e10 / 9e10 = 700ms", "fail"),
        ("2 - 1.5 = 0", "pass"),
        ("3 - 1 = 0", "fail"),
    ],
)
def test_trailing_zeros_in_code_spans(span: str, status: str) -> None:
    assert _statuses(_span(span)) == [status]


def test_trailing_zeros_in_calc_checks() -> None:
    analysis = _calc("t = 3 * 1050 * 4096 / 9e10 -> us\nt == 140 us\nt == 140.0 us")
    assert _statuses(analysis) == ["pass", "fail"]


def test_trailing_zeros_in_prose_claims() -> None:
    text = "```calc\nt = 3 * 1050 * 4096 / 9e10 -> us\n```\n\nIt takes 140 µs<!-- = t --> or 140.0 µs<!-- = t -->.\n"
    assert _statuses(_analyze(text)) == ["pass", "fail"]


# -- 3. thousands separators ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("24,576 / (8 * 64) = 48", "pass"),
        ("24,576 / (8 * 64) = 46", "fail"),
        ("12*20*28 / (2*2) = 1,680", "pass"),
        ("12*20*28 / 2*2 = 1,680", "fail"),
        ("(24,576 + 1,024) / 8 = 3,200", "pass"),
        ("50,331,648 / 2 = 25,165,824", "pass"),
        ("1,234.5 * 2 = 2,469", "pass"),
    ],
)
def test_thousands_separators_in_code_spans(span: str, status: str) -> None:
    assert _statuses(_span(span)) == [status]


@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("min(1,2) * 3 = 3", "pass"),
        ("max(600GB/s, 450GB/s) * 2 = 1.2TB/s", "pass"),
        # f(1,000) is ambiguous: inside call parentheses the comma separates arguments.
        ("max(1,000) + 1 = 2", "pass"),
        ("bf16[8,128,8192].bytes * 2 = 33.6MB", "pass"),
        ("sum([1,000, 2]) * 1 = 3", "pass"),
    ],
)
def test_commas_inside_calls_and_brackets_separate_arguments(span: str, status: str) -> None:
    assert _statuses(_span(span)) == [status]


def test_a_comma_not_followed_by_three_digits_is_not_a_separator() -> None:
    analysis = _span("1,68 * 2 = 3,36")
    assert _statuses(analysis) == []
    assert [d.code for d in analysis.diagnostics if d.severity <= 2] == []  # at most a hint that it was not read


# -- 4. x between two numbers multiplies ---------------------------------------------------------
@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("4,096 x 6,144 x 2 = 50,331,648", "pass"),
        ("4,096 x 6,144 = 50,331,648", "fail"),
        ("8 x 128 = 1024", "pass"),
        ("8 x 128 = 1025", "fail"),
        ("8 × 128 = 1024", "pass"),
    ],
)
def test_x_between_numbers_multiplies(span: str, status: str) -> None:
    assert _statuses(_span(span)) == [status]


def test_a_name_x_is_still_a_name() -> None:
    text = "```calc\nx = 3\ny = 2 * x\n```\n\nSo `2 * x + 1 = 7` and `x * 4 = 12` and `2 x 5 = 10`.\n"
    analysis = _analyze(text)
    assert _statuses(analysis) == ["pass", "pass", "pass"]
    assert [v.quantity.value for v in analysis.values if v.quantity is not None][:2] == [3.0, 6.0]


# -- 5. kiB --------------------------------------------------------------------------------------
def test_lower_case_kib_is_kibibytes() -> None:
    registry = default_registry()
    lower, upper = registry.lookup("kiB"), registry.lookup("KiB")
    assert lower is not None and upper is not None
    assert (lower.factor, lower.dim) == (upper.factor, upper.dim) == (1024.0, upper.dim)
    assert _statuses(_span("4 kiB * 2 = 8192 bytes")) == ["pass"]
    assert _statuses(_span("4 kiB * 3 = 8192 bytes")) == ["fail"]


def test_lower_case_kib_in_bits_is_not_guessed() -> None:
    # 'kib' could be kibibits or kibibytes: it stays unknown rather than guessed.
    assert default_registry().lookup("kib") is None


# -- 6. -> inside parentheses --------------------------------------------------------------------
def test_a_conversion_inside_parentheses_in_a_code_span() -> None:
    assert _statuses(_span("(1 GiB -> GB) ≈ 1.074 GB")) == ["pass"]
    assert _statuses(_span("(1 GiB -> GB) ≈ 1.2 GB")) == ["fail"]


def test_a_conversion_inside_parentheses_in_a_calc_block() -> None:
    analysis = _calc("x = (2 * 8e9 byte -> GB) / 2\nx == 8 GB\n(1 GiB -> GB) ≈ 1.074 GB\n(1 GiB -> GB) ≈ 1.2 GB")
    assert _codes(analysis) == ["C001"]
    assert _statuses(analysis) == ["pass", "pass", "fail"]


def test_a_conversion_inside_parentheses_to_another_dimension_is_an_error() -> None:
    analysis = _calc("y = (1 GiB -> s) * 2")
    assert _codes(analysis) == ["U002"]


# -- 7. a shape compared with a size -------------------------------------------------------------
@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("bf16[4096, 7168] = 58.7MB", "pass"),
        ("bf16[4096, 7168] = 29.4MB", "fail"),
        ("int8[1024, 1024] = 1 MiB", "pass"),
    ],
)
def test_a_shape_equal_to_a_size_compares_its_bytes(span: str, status: str) -> None:
    analysis = _span(span)
    assert _statuses(analysis) == [status]
    assert "U006" not in _codes(analysis)


def test_a_shape_compared_with_a_plain_count_stays_an_error_with_its_fields() -> None:
    analysis = _span("bf16[4096, 7168] = 29,360,128")
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "U006"]
    assert "bytes" in diagnostic.message and "size" in diagnostic.message
    assert "write .size or .bytes" in diagnostic.notes[0]


def test_a_shape_in_a_calc_check_compares_its_bytes() -> None:
    analysis = _calc("bf16[4096, 7168] ≈ 58.7 MB\nbf16[4096, 7168] == 117 MB")
    assert _statuses(analysis) == ["pass", "fail"]


@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("`2 * 24576 / 2400 ≈ 20`", "pass"),  # 20.48
        ("`24576 / 2400 ≈ 20`", "fail"),  # 10.24: a lost factor of 2, not 'about 20'
        ("`2 * 24576 / 2400 ≈ 30`", "fail"),
        ("`2 * 54 ≈ 100`", "pass"),  # truncation: one digit above
        ("`2 * 24 ≈ 100`", "fail"),  # half a digit below at most
    ],
)
def test_approximate_window_is_the_rounding_window_widened_by_the_relative_tolerance(span: str, status: str) -> None:
    (check,) = analyze_document(span + "\n", "a.md").checks
    assert check.status == status, check.message


@pytest.mark.parametrize(
    ("span", "status"),
    [
        ("`1923 * 3600 = 6.9e6 tokens / hour`", "pass"),  # the claim is per hour: 6.92e6 tokens in an hour
        ("`1923 * 3600 = 6.8e6 tokens / hour`", "fail"),
        ("`50 / .026 = 1923 tokens / sec`", "pass"),
    ],
)
def test_a_claim_with_a_spaced_rate_unit_is_read_in_that_unit(span: str, status: str) -> None:
    (check,) = analyze_document(span + "\n", "r.md").checks
    assert check.status == status, check.message


def _last_digit_unit_as_first_written(text: str) -> float:
    """The reading ``last_digit_unit`` keeps, written plainly (a faster table lookup replaced its ``float(f"1e{n}")``)."""
    import re

    match = re.match(r"^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", text.replace(",", "").replace("_", ""))
    if not match:
        return 0.0
    integer, fraction = match.group(1), match.group(2)
    exponent = int(match.group(3) or 0)
    if fraction is None:
        digits = integer.lstrip("0")
        return float(f"1e{exponent + len(digits) - len(digits.rstrip('0'))}")
    return float(f"1e{exponent - len(fraction)}")


@settings(max_examples=int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0")) or 500, deadline=None)
@given(st.lists(st.sampled_from(["0", "1", "7", "00", ",", "_", ".", "e", "E", "-", "+", "3", "400", "e-350", "x"]),
                max_size=10).map("".join))  # fmt: skip
def test_the_last_printed_digit_reads_as_it_always_did(text: str) -> None:
    assert last_digit_unit(text) == _last_digit_unit_as_first_written(text)
