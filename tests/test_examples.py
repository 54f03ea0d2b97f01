"""The drafts in examples/ pass; each deliberate mistake is caught at its number."""

from __future__ import annotations

import json

from tests.conftest import ROOT, margin


def test_examples_pass_as_the_quick_start_runs_them() -> None:
    result = margin("check", "examples/", cwd=ROOT)
    assert result.returncode == 0, result.stdout
    assert "0 failed" in result.stdout and "0 errors" in result.stdout
    # 36, examples/book 3, examples/measured-roofline.md 4, examples/compiler-check.md 3
    assert "problems 46 passed" in result.stdout


def test_the_compiler_check_example_runs_no_python_in_the_quick_start() -> None:
    """Untrusted (the repository says nothing about trust): one warning at the block saying how to trust
    it, the checks against XLA untested, the hand derivations checked; tests/jax checks it trusted."""
    result = margin("check", "--format", "json", "examples/compiler-check.md", cwd=ROOT)
    report = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout
    warnings = [d for d in report["diagnostics"] if d["severity"] != "information"]
    assert [(d["code"], d["line"]) for d in warnings] == [("T001", 19)] and "trust = true" in warnings[0]["message"]
    assert {d["code"] for d in report["diagnostics"]} == {"T001", "T003"}
    assert report["summary"]["checks"] == {"pass": 7, "fail": 0, "warn": 0, "skip": 10}
    assert report["summary"]["problems"] == {"pass": 3, "fail": 0, "untested": 0}


def test_every_mistake_is_reported_at_the_prose_number_with_both_values() -> None:
    result = margin("check", "--format", "json", "examples/mistakes/", cwd=ROOT)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    found = {(d["line"], d["code"]) for d in report["diagnostics"]}
    assert found == {(13, "C001"), (15, "C001"), (17, "C001"), (20, "U001"), (22, "U005")}
    by_line = {d["line"]: d for d in report["diagnostics"]}
    assert "computed 22.49 days, not ≈ 12 days" in by_line[13]["message"]
    assert by_line[13]["fixes"][0]["text"] == "22 days"
    assert "factor of 3600" in by_line[17]["notes"][0]
    assert "factor of 1000" in by_line[15]["notes"][0]


def test_examples_report_their_own_coverage_and_every_concept_is_tested() -> None:
    result = margin("coverage", "--fail-under", "100", "examples/", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    total = result.stdout.splitlines()[-1].split()
    assert total[0] == "TOTAL" and total[4] == "100%"
    assert "examples/training-step.md" in result.stdout and "## Communication on the slice's axes" in result.stdout


def test_the_training_step_example_answers_its_question_on_the_slice() -> None:
    result = margin("check", "--format", "json", "examples/training-step.md", cwd=ROOT)
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["summary"]["problems"]["pass"] == 4
