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


UNMEASURED = "t = measure_matmul(bf16[8, 8192], bf16[8192, 8192], h100)\nt.median < 1 s\n"


def test_a_problem_whose_checks_are_all_untested_is_untested_not_passed() -> None:
    analysis = analyze(f"**Question 3:** How fast?\n\n```calc\n{UNMEASURED}```\n")
    (problem,) = analysis.problems
    assert (problem.status, problem.passed, problem.failed, problem.total) == ("untested", 0, 0, 1)
    (message,) = [d.message for d in analysis.diagnostics if d.code.startswith("P")]
    assert message == "Question 3 is untested: none of its checks could be evaluated (1 untested)"
    assert [d.code for d in analysis.diagnostics if d.code.startswith("P")] == ["P004"]


def test_an_untested_check_beside_a_passing_one_leaves_the_problem_passing() -> None:
    analysis = analyze(f"**Question 3:** How fast?\n\n```calc\n{UNMEASURED}1 + 1 == 2\n```\n")
    assert [p.status for p in analysis.problems] == ["pass"]
    assert not [d for d in analysis.diagnostics if d.code.startswith("P")]
