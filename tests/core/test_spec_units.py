"""Every unit case written in docs/units.md (and the issue's acceptance), one test each."""

from __future__ import annotations

import pytest

from tests.conftest import analyze, codes, run, statuses


def test_unannotated_count_over_flops_compared_with_time_passes() -> None:
    # 2*B*D*F / C with the count read as FLOP: 2*128*8192*8192 / 989.4e12 = 17.4 µs.
    result = run("B = 128\nD = 8192\nF = 8192\n2*B*D*F / h100.flops_bf16 ≈ 17.4 us")
    assert statuses(result) == ["pass"]
    assert codes(result) == []


def test_unannotated_count_over_flops_compared_with_wrong_time_fails_not_mismatch() -> None:
    result = run("B = 8192\nD = 8192\nF = 8192\n2*B*D*F / h100.flops_bf16 ≈ 1.5 ms")
    assert statuses(result) == ["fail"]
    assert codes(result) == ["C001"]


def test_bytes_times_counts_over_flops_compared_with_time_is_a_unit_error() -> None:
    result = run("D = 8192\nF = 8192\n2 byte * D * F / h100.flops_bf16 ≈ 1.2 ms")
    assert codes(result) == ["U001"]
    message = result.diagnostics[0].message
    assert "s·byte/FLOP" in message and " s" in message


def test_adding_gigabytes_to_seconds_is_an_error_naming_both_units() -> None:
    result = run("1 GB + 1 s")
    assert codes(result) == ["U001"]
    assert "byte" in result.diagnostics[0].message and " s" in result.diagnostics[0].message


def test_claim_in_gb_against_value_in_gib_is_converted_and_compared() -> None:
    doc = analyze("```calc\nm = 16 GiB\n```\n\nThe chip holds 17.2 GB<!-- = m -->, not 18 GB<!-- = m -->.\n")
    assert statuses(doc) == ["pass", "fail"]


def test_decimal_claim_that_only_matches_as_binary_is_a_warning() -> None:
    doc = analyze("```calc\nm = 16 GiB\n```\n\nThe chip holds 16 GB<!-- = m -->.\n")
    assert statuses(doc) == ["warn"]
    assert codes(doc) == ["U005"]
    assert "GiB" in doc.diagnostics[0].message


def test_flops_per_second_over_dollars_per_hour_gives_flop_per_usd_with_3600() -> None:
    result = run("C = 1e15 FLOP/s\nC / (2.7 USD/h)")
    assert result.value is not None and result.value.quantity is not None
    assert result.value.display == "1.33e18 FLOP/USD"
    assert result.value.quantity.value == pytest.approx(1e15 * 3600 / 2.7)


def test_issue_acceptance_188us_passes() -> None:
    doc = analyze("The time is `1.7e7 / 9e10 = 188us`.")
    assert statuses(doc) == ["pass"]


def test_issue_acceptance_lost_factor_of_1000_fails() -> None:
    doc = analyze("The bytes are `2*8*128*8192 = 1.7e10`.")
    assert statuses(doc) == ["fail"]
    assert codes(doc) == ["C001"]
    assert "factor of 1000" in doc.diagnostics[0].notes[0]


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [("1 FLOPs", "1 FLOP"), ("3 FLOP/s", "3 FLOP/s"), ("3 FLOPs/s", "3 FLOP/s"), ("3 FLOPS", "3 FLOP/s")],
)
def test_flops_spellings(spelling: str, expected: str) -> None:
    assert run(spelling).value.display == expected  # type: ignore[union-attr]


def test_flops_all_caps_is_read_as_a_rate_with_a_hint() -> None:
    assert codes(run("197 TFLOPS")) == ["U003"]


def test_count_units_annotate_but_never_mismatch() -> None:
    result = run("D = 15e12 token\nN = 70e9 param\nC = 6 * N * D -> FLOP\nC ≈ 6.3e24 FLOP")
    assert statuses(result) == ["pass"]
    assert codes(result) == []
    assert run("D = 15e12 tokens\nD").value.display == "1.5e13 token"  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "value"), [("8k", 8e3), ("3.48M", 3.48e6), ("70B", 70e9), ("15T", 15e12)])
def test_magnitude_suffixes_are_multipliers(text: str, value: float) -> None:
    result = run(text)
    assert result.value.quantity.value == pytest.approx(value)  # type: ignore[union-attr]
    assert result.value.quantity.dim == 0  # type: ignore[union-attr]


def test_lone_b_after_a_space_is_bytes_with_a_hint() -> None:
    result = run("16 B")
    assert result.value.display == "16 bytes"  # type: ignore[union-attr]
    assert codes(result) == ["U004"]


@pytest.mark.parametrize(
    ("text", "factor"), [("1 GB", 1e9), ("1 GiB", 2**30), ("1 kB", 1e3), ("1 KiB", 1024), ("1 bit", 0.125)]
)
def test_decimal_and_binary_byte_prefixes(text: str, factor: float) -> None:
    assert run(text).value.quantity.value == factor  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1 ns", 1e-9), ("1 us", 1e-6), ("1 µs", 1e-6), ("1 μs", 1e-6), ("1 ms", 1e-3), ("1 s", 1), ("1 min", 60),
     ("1 h", 3600), ("1 day", 86400), ("1 week", 604800), ("1 year", 31557600)],
)  # fmt: skip
def test_time_units(text: str, seconds: float) -> None:
    assert run(text).value.quantity.value == pytest.approx(seconds)  # type: ignore[union-attr]


def test_implied_prefix_is_a_warning_naming_the_unit() -> None:
    doc = analyze("The fleet holds `8960 * 96 = 860TB`.")
    assert statuses(doc) == ["warn"]
    assert codes(doc) == ["U005"]
    assert "GB" in doc.diagnostics[0].message


@pytest.mark.parametrize(
    ("text", "display"),
    [("189e-6 s", "189 µs"), ("16.8e6 byte", "16.8 MB"), ("6.3e24 FLOP", "6.3e24 FLOP"), ("1.9e6 s", "22 days")],
)
def test_display_picks_a_readable_unit(text: str, display: str) -> None:
    assert run(text).value.display == display  # type: ignore[union-attr]


def test_arrow_overrides_display_unit() -> None:
    assert run("bf16[8, 128, 8192].bytes -> MB").value.display == "16.8 MB"  # type: ignore[union-attr]
    assert run("3600 s -> h").value.display == "1 h"  # type: ignore[union-attr]


def test_equals_accepts_rounding_or_truncation_in_the_last_printed_digit() -> None:
    doc = analyze("`2 / 3 = 0.6` `2 / 3 = 0.7` `2 / 3 = 0.8` `10 / 3 = 3.4` `10/3 = 3` `-2/3 = -0.6` `-2/3 = -0.5`")
    assert statuses(doc) == ["pass", "pass", "fail", "fail", "pass", "pass", "fail"]


def test_approx_uses_the_relative_tolerance_and_the_config_changes_it() -> None:
    text = "```calc\n104 ≈ 100.0\n108 ≈ 100.0\n```"  # 100.0: the zeros count (a bare 100 is precise to hundreds)
    assert statuses(analyze(text)) == ["pass", "fail"]
    assert statuses(analyze(text, tolerance=0.1)) == ["pass", "pass"]


def test_explicit_tolerances_relative_and_absolute() -> None:
    result = run("5 ≈ 5.2 ± 5%\n5 ≈ 5.2 ± 3%\n5 s ≈ 5.2 s ± 0.3 s\n5 s ≈ 5.2 s +- 100 ms")
    assert statuses(result) == ["pass", "fail", "pass", "fail"]


def test_sweep_check_holds_for_every_element() -> None:
    result = run("B = [1, 8, 64, 512]\nB * 2 byte < 2 kB\nB * 2 byte < 1 kB")
    assert statuses(result) == ["pass", "fail"]
