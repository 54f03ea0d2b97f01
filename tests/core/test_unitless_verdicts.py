"""Unitless left sides (issue 10): a carried unit passes quietly, a prefix not written warns (U005),
and a value with no unit is never shown in a unit it was not given (docs/units.md)."""

from __future__ import annotations

import pytest

from scaling_core import DocumentAnalysis
from server.junit import to_junit
from server.reports import report_records
from server.sarif import to_sarif
from server.text_report import to_text
from tests.conftest import analyze, codes, statuses


def only_check(doc: DocumentAnalysis) -> dict[str, object]:
    """The JSON record of the document's one check."""
    records = report_records([doc], ["draft.md"])["checks"]
    assert len(records) == 1
    record: dict[str, object] = records[0]
    return record


@pytest.mark.parametrize(
    ("text", "display", "seconds_or_bytes"),
    [
        ("A step takes 23ms; half of it is `23 / 2 = 11.5ms`.", "11.5 ms", 0.0115),
        ("The copy takes 120us, plus 9: `120 + 9 = 129us`.", "129 µs", 129e-6),
        ("Each link is 50GB/s, so twelve give `12 * 50 = 600GB/s`.", "600 GB/s", 600e9),
    ],
)
def test_unit_carried_from_the_previous_line_passes_quietly(text: str, display: str, seconds_or_bytes: float) -> None:
    doc = analyze(text)
    assert statuses(doc) == ["pass"]
    assert codes(doc) == []
    record = only_check(doc)
    assert record["display"] == display
    assert record["value"] == pytest.approx(seconds_or_bytes)


def test_a_prefix_the_author_did_not_write_still_warns() -> None:
    doc = analyze("Each chip holds 80GB, so the pod holds `4096 * 80 = 328TB`.")
    assert statuses(doc) == ["warn"]
    assert codes(doc) == ["U005"]
    message = doc.diagnostics[0].message
    assert "only if read as GB" in message
    assert "327680 (no unit)" in message
    record = only_check(doc)
    assert record["display"] == "327680 (no unit)"
    assert (record["value"], record["unit"]) == (327680.0, "")


def test_bits_to_bytes_step_is_a_prefix_not_written_and_warns() -> None:
    doc = analyze("Each link runs at 800Gb/s: `2 * 16 * 800 / 8 = 3.2TB/s`.")
    assert statuses(doc) == ["warn"]
    assert codes(doc) == ["U005"]
    assert "only if read as GB/s" in doc.diagnostics[0].message


def test_wrong_unitless_span_is_shown_with_no_unit_and_the_nearest_reading() -> None:
    doc = analyze("Each link runs at 400Gb/s: `64 * 400 / 8 = 25.6TB/s`.")
    assert statuses(doc) == ["fail"]
    assert codes(doc) == ["C001"]
    diagnostic = doc.diagnostics[0]
    assert diagnostic.message == (
        "check failed: '64 * 400 / 8' is 3200 (no unit), not = 25.6TB/s (tolerance -50 GB/s/+100 GB/s); "
        "as GB/s it is 3.2 TB/s, 1/8 of the claim"
    )
    assert diagnostic.notes == ("off by a factor of 8 (bits vs bytes?)",)
    assert "kB/s" not in doc.checks[0].message
    record = only_check(doc)
    assert (record["display"], record["value"], record["unit"]) == ("3200 (no unit)", 3200.0, "")


def test_wrong_arithmetic_with_the_carried_unit_names_that_reading() -> None:
    doc = analyze("A step takes 23ms; half of it is `23 / 2 = 13ms`.")
    assert statuses(doc) == ["fail"]
    message = doc.diagnostics[0].message
    assert "'23 / 2' is 11.5 (no unit), not = 13ms" in message
    assert message.endswith("; as ms it is 11.5 ms, 0.885× the claim")


def test_reading_in_base_units_still_passes() -> None:
    doc = analyze("A 4096-square bf16 matrix is `2 * 4096 * 4096 = 33.5MB`.")
    assert statuses(doc) == ["pass"]
    assert codes(doc) == []
    assert only_check(doc)["display"] == "33.55 MB"


def test_unitless_on_both_sides_is_a_plain_number() -> None:
    doc = analyze("`23 / 2 = 11.5` and `23 / 2 = 13`")
    assert statuses(doc) == ["pass", "fail"]
    assert [c.computed_display for c in doc.checks] == ["11.5", "11.5"]
    assert "no unit" not in doc.diagnostics[0].message


def test_a_count_over_a_rate_is_not_read_in_the_claims_unit() -> None:
    # 2e15 FLOP / 989 TFLOP/s is about 2 s: the claim's "2" must not pass by reading it as ms.
    doc = analyze("`2e15 / h100.flops_bf16 = 2ms`")
    assert statuses(doc) != ["pass"]


def test_calc_check_with_the_carried_unit_passes() -> None:
    doc = analyze("```calc\nhalf = 23 / 2\nhalf == 11.5 ms\n```\n")
    assert statuses(doc) == ["pass"]
    assert codes(doc) == []


def test_text_sarif_and_junit_reports_show_no_unit() -> None:
    doc = analyze("Each link runs at 400Gb/s: `64 * 400 / 8 = 25.6TB/s`.")
    for report in (
        to_text([doc], ["draft.md"], show_hints=False),
        to_sarif([doc], ["draft.md"]),
        to_junit([doc], ["draft.md"]),
    ):
        assert "3200 (no unit)" in report
        assert "3.2 kB/s" not in report


def test_quick_fix_for_a_unitless_claim_uses_the_claims_own_unit_or_none() -> None:
    carried = analyze("```calc\nhalf = 23 / 2\n```\n\nHalf a step is 13 ms<!-- = half -->.\n")
    assert [f.title for f in carried.diagnostics[0].fixes] == ["Replace 13 ms with 12 ms"]
    fixed = analyze("```calc\nhalf = 23 / 2\n```\n\nHalf a step is 12 ms<!-- = half -->.\n")
    assert statuses(fixed) == ["pass"]
    # 3200 reads as 3.2 TB/s only as GB/s, a unit the claim does not write: no fix would pass.
    other = analyze("```calc\nbw = 64 * 400 / 8\n```\n\nTogether 25.6 TB/s<!-- = bw -->.\n")
    assert codes(other) == ["C001"]
    assert other.diagnostics[0].fixes == ()


def test_an_implied_prefix_is_one_authors_write() -> None:
    # 1.7e7 / 4.5e10 is 378 µs: '378ms' is a 1000× slip, not "378 read as ks".
    (check,) = analyze("`1.7e7 / 4.5e10 = 378ms`\n").checks
    assert check.status == "fail"
    (check,) = analyze("`1.7e7 / 4.5e10 = 0.378ms`\n").checks
    assert check.status == "pass"
