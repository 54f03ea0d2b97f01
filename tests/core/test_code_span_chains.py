"""Code-span chains: every readable span is checked, every skip is visible (issue 10).

A code span ``expr = value`` is read as a chain of links joined by ``=``,
``≈``, ``~=`` or ``~``; each link is checked against the last value; a link
that cannot be read or names something unknown is skipped with hint C002,
and the others are still checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scaling_core import analyze_document
from scaling_core.diagnostics import Severity
from scaling_core.document.incremental import RegionCache
from scaling_core.document.results import DocumentAnalysis
from server.cli import main


def analyze(text: str) -> DocumentAnalysis:
    return analyze_document(text, "x.md")


def checks(text: str) -> list[tuple[str, str, str]]:
    """(checked text, relation, status) of each check."""
    analysis = analyze(text)
    return [(text[c.span.start : c.span.end], c.op, c.status.value) for c in analysis.checks]


def hints(text: str) -> list[tuple[str, str]]:
    """(text under the hint, message) of each C002 hint."""
    found = []
    for d in analyze(text).diagnostics:
        if d.code == "C002":
            assert d.severity is Severity.HINT
            found.append((text[d.span.start : d.span.end], d.message))
    return found


def codes(text: str) -> list[str]:
    return [d.code for d in analyze(text).diagnostics]


# -- 1. `~` and `≈` inside a chain ----------------------------------------------
def test_a_tilde_is_an_approximate_link() -> None:
    assert checks("`2 * 8 * 128 = 2048 ~ 2e3`") == [
        ("2 * 8 * 128 = 2048 ~ 2e3", "≈", "pass"),
        ("2048 ~ 2e3", "≈", "pass"),
    ]
    assert codes("`2 * 8 * 128 = 2048 ~ 2e3`") == []


def test_an_approximate_link_is_still_a_check_that_can_fail() -> None:
    assert checks("`2 * 8 * 128 ~ 3.0e3`") == [("2 * 8 * 128 ~ 3.0e3", "≈", "fail")]
    assert codes("`2 * 8 * 128 ~ 3.0e3`") == ["C001"]


def test_a_link_written_as_approximate_is_compared_approximately() -> None:
    # 2048 is not 2.00e3 to the printed digit, but it was written '~ 2000': the link is approximate.
    assert checks("`2 * 1024 ~ 2000 = 2.00e3`") == [
        ("2 * 1024 ~ 2000 = 2.00e3", "≈", "pass"),
        ("2000 = 2.00e3", "=", "pass"),
    ]
    assert checks("`2 * 1024 = 2.00e3`") == [("2 * 1024 = 2.00e3", "=", "fail")]
    assert checks("`2 * 1024 ≈ 2000 = 2.00e3`")[0][1:] == ("≈", "pass")
    assert checks("`2 * 1024 ~= 2000 = 2.00e3`")[0][1:] == ("≈", "pass")


def test_links_after_the_approximate_one_keep_the_printed_precision() -> None:
    # 3 * 700 = 2100 exactly; '2100 ≈ 2e3' is approximate; '2 * 1050 = 2100' is exact.
    assert checks("`3 * 700 = 2 * 1050 ≈ 2e3`") == [
        ("3 * 700 = 2 * 1050 ≈ 2e3", "≈", "pass"),
        ("2 * 1050 ≈ 2e3", "≈", "pass"),
    ]
    assert checks("`2 * 1050 ≈ 3 * 700 = 2101`") == [
        ("2 * 1050 ≈ 3 * 700 = 2101", "≈", "pass"),
        ("3 * 700 = 2101", "=", "fail"),
    ]


# -- 2. two equations in one span ---------------------------------------------------
def test_two_equations_after_a_unit_and_a_full_stop_are_two_checks() -> None:
    text = "`2 * 3e9 / 1e3 = 6MB. 64e3 / 4.5e10 = 1.4us`"
    assert checks(text) == [("2 * 3e9 / 1e3 = 6MB", "=", "pass"), ("64e3 / 4.5e10 = 1.4us", "=", "pass")]
    assert codes(text) == []


def test_two_equations_separated_by_a_semicolon_are_two_checks() -> None:
    text = "`2 * 3 = 6; 4 * 5 = 21`"
    assert checks(text) == [("2 * 3 = 6", "=", "pass"), ("4 * 5 = 21", "=", "fail")]
    (failure,) = [d for d in analyze(text).diagnostics if d.code == "C001"]
    assert text[failure.span.start : failure.span.end] == "21"


def test_a_full_stop_after_a_number_is_not_a_separator() -> None:
    # '64.' is a number as written: no split.  The link '64. 64e3 / 4.5e10' cannot be read, so
    # '2 * 32' has nothing to be compared with (never with 1.4us across the gap): one hint covers both.
    text = "`2 * 32 = 64. 64e3 / 4.5e10 = 1.4us`"
    assert checks(text) == []
    assert hints(text) == [("2 * 32 = 64. 64e3 / 4.5e10", "not checked: cannot read '64. 64e3 / 4.5e10'")]


# -- 3. a single call on the left ---------------------------------------------------
@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("`sqrt(2e6 * 4096 / 8192) = 1000`", "pass"),
        ("`sqrt(2e6 * 4096 / 8192) = 2000`", "fail"),
        ("`min(600GB/s, 450GB/s, 12TB/s) = 450GB/s`", "pass"),
        ("`max(600GB/s, 450GB/s, 12TB/s) = 450GB/s`", "fail"),
    ],
)
def test_a_single_call_on_the_left_is_a_check(text: str, status: str) -> None:
    assert checks(text) == [(text.strip("`"), "=", status)]


@pytest.mark.parametrize("span", ["`x = 5`", "`lr = 3e-4`", "`n = 8`", "`x = x`", "`h100.hbm = 80GB`"])
def test_a_name_or_number_on_the_left_is_code(span: str) -> None:
    text = "```calc\nx = 5\nlr = 3e-4\nn = 8\n```\n\nSet " + span + ".\n"
    assert checks(text) == []
    assert codes(text) == []


# -- 4. a link naming something unknown is skipped ----------------------------------------
def test_an_unreadable_first_link_is_skipped_and_the_rest_checked() -> None:
    text = "`(cache size + weight size) / (8 * 8.1e11) = 96e9 / (8 * 8.1e11) = 15ms`"
    assert checks(text) == [("96e9 / (8 * 8.1e11) = 15ms", "=", "pass")]
    assert hints(text) == [
        (
            "(cache size + weight size) / (8 * 8.1e11)",
            "not checked: cannot read '(cache size + weight size) / (8 * 8.1e11)'",
        )
    ]
    wrong = text.replace("15ms", "25ms")
    assert checks(wrong) == [("96e9 / (8 * 8.1e11) = 25ms", "=", "fail")]


@pytest.mark.parametrize(
    ("text", "skipped", "checked"),
    [
        ("`KV size / 2 = 2e9 / 2 = 1e9`", "KV size / 2", "2e9 / 2 = 1e9"),
        ("`2BD * 4 = 2 * 8 * 4 = 64`", "2BD * 4", "2 * 8 * 4 = 64"),
        ("`2 * nosuch = 2 * 3 = 6`", "2 * nosuch", "2 * 3 = 6"),
    ],
)
def test_unknown_links_are_skipped_visibly(text: str, skipped: str, checked: str) -> None:
    assert checks(text) == [(checked, "=", "pass")]
    assert [h[0] for h in hints(text)] == [skipped]


# -- 5. every skip is visible --------------------------------------------------------
def test_an_unknown_name_is_a_hint_with_the_reason() -> None:
    assert hints("`2 * nosuch = 4`") == [("2 * nosuch", "not checked: unknown name 'nosuch'")]
    assert checks("`2 * nosuch = 4`") == []
    assert [d.severity for d in analyze("`2 * nosuch = 4`").diagnostics] == [Severity.HINT]


def test_an_unknown_function_and_an_unreadable_claim_are_hints() -> None:
    assert hints("`nosuch(2 * 3) = 6`") == [("nosuch(2 * 3)", "not checked: unknown function 'nosuch'")]
    assert hints("`2 * 3 = 6 apples of gold`") == [
        ("2 * 3 = 6 apples of gold", "not checked: cannot read '6 apples of gold'")
    ]


def test_a_span_whose_brackets_do_not_close_is_a_hint() -> None:
    assert hints("`2 * (3 + 4 = 14`") == [("2 * (3 + 4 = 14", "not checked: cannot read '2 * (3 + 4 = 14'")]


@pytest.mark.parametrize(
    "span",
    [
        "`x = 5`",  # a name on the left: an assignment
        "`lr = 3e-4`",
        "`a == b`",  # no '=' relation
        "`f(x) = x^2`",  # no number on the right
        "`f(x) = 2x`",  # no number on the left
        "`x += 1`",  # no number on the left
        "`y = 2 * x`",  # a name on the left
        "`arr[i+1] = 0`",  # an index, not arithmetic
        "`i = i + 1`",
        "`a = b = 0`",
        "`for (i = 0; i < n; i++)`",
        "`x != 5`",
    ],
)
def test_plain_code_gets_no_hint(span: str) -> None:
    assert codes("Write " + span + ".\n") == []


def test_hints_are_shown_only_with_verbose_and_never_change_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("It is `2 * nosuch = 4` and `2 * 3 = 6`.\n", "utf-8")
    assert main(["check", str(draft)]) == 0
    assert "C002" not in capsys.readouterr().out
    assert main(["check", "-v", str(draft)]) == 0
    assert "C002" in capsys.readouterr().out


def test_a_tolerance_may_follow_the_last_value() -> None:
    assert checks("`2 * 3.1 = 6 ± 5%`") == [("2 * 3.1 = 6 ± 5%", "=", "pass")]
    assert checks("`2 * 3.5 = 6 ± 5%`") == [("2 * 3.5 = 6 ± 5%", "=", "fail")]


@pytest.mark.parametrize("span", ["`~/.bashrc`", "`a ~= b`", "`~1000 tokens`", "`e.g. x = 5`", "`x = 1/0`"])
def test_tildes_full_stops_and_errors_in_plain_code_stay_quiet(span: str) -> None:
    assert codes("See " + span + ".\n") == []
    assert checks("See " + span + ".\n") == []


def test_a_word_and_a_full_stop_before_an_equation_leave_it_checked() -> None:
    assert checks("`e.g. 2 * 3 = 7`") == [("2 * 3 = 7", "=", "fail")]


def test_an_error_in_checked_arithmetic_is_reported() -> None:
    assert codes("`2 * 3 / 0 = 6`") == ["E001"]
    assert codes("`2 GB + 3 s = 5`") == ["U001"]


def test_an_unknown_name_in_the_tolerance_is_a_hint() -> None:
    assert hints("`2 * 3 = 6 ± nosuch`") == [("nosuch", "not checked: unknown name 'nosuch'")]
    assert codes("`2 * 3 = 6 ± nosuch`") == ["C002"]


def test_a_hint_goes_once_the_name_is_defined_in_an_incremental_analysis() -> None:
    cache = RegionCache()
    span = "See `2 * K = 16`.\n"
    assert codes_of(analyze_document(span, "x.md", cache=cache)) == ["C002"]
    assert codes_of(analyze_document("```calc\nK = 8\n```\n\n" + span, "x.md", cache=cache)) == []
    assert codes_of(analyze_document("```calc\nK = 9\n```\n\n" + span, "x.md", cache=cache)) == ["C001"]


def codes_of(analysis: DocumentAnalysis) -> list[str]:
    return [d.code for d in analysis.diagnostics]
