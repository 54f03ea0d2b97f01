"""A failing problem's message says what happened to its checks (issue 10: no "0 of 2 checks fail")."""

from __future__ import annotations

from tests.conftest import analyze

QUESTION = "**Question 2:** How long?\n\n```calc\nx = 2\ny = nosuch * 2\n```\n\n"


def _problem_message(text: str) -> str:
    (message,) = [d.message for d in analyze(text).diagnostics if d.code == "P001"]
    return message


def test_a_check_that_could_not_be_evaluated_is_named_as_such() -> None:
    message = _problem_message(QUESTION + "It is 2<!-- = x --> and 4<!-- = y -->.\n")
    assert message == "Question 2 fails: 1 of 2 checks could not be evaluated"


def test_failed_and_unevaluated_checks_are_both_counted() -> None:
    message = _problem_message(QUESTION + "It is 3<!-- = x --> and 4<!-- = y -->.\n")
    assert message == "Question 2 fails: 1 of 2 checks fail; 1 of 2 checks could not be evaluated"


def test_a_suppressed_check_is_not_counted_as_unevaluated() -> None:
    text = QUESTION + "It is 3<!-- = x -->.\n\n<!-- margin: ignore C001 -->\nAnd 5<!-- = x -->.\n"
    assert _problem_message(text) == "Question 2 fails: 1 of 2 checks fail"
