"""JUnit XML output of ``margin check``, valid against the Jenkins xUnit plugin's ``junit-10.xsd``.

One ``<testsuite>`` per file (``file`` is its path, ``time`` its analysis time),
one ``<testcase>`` per check and per problem, and one more, ``other errors``,
for the file's errors that belong to no check or problem.  Each error
diagnostic is counted once: a check's C001 under that check, the error that
kept a check from being evaluated under that check, a problem's P001 under the
problem, the rest under ``other errors``.  So a run exits 1 exactly when some
test case fails or errs.

=================================  =================================================
check or problem                   test case
=================================  =================================================
check ``pass``, ``warn`` (U005)    passes (a warning goes to ``<system-out>``)
check ``fail``                     ``<failure>`` (passes if C001 was made a warning)
check ``skip``, suppressed         ``<skipped>``, never a failure
check ``skip``, not evaluated      ``<error>``: the error that stopped it
problem ``fail``                   ``<failure>``; ``<skipped>`` if P001 is suppressed
problem ``untested``               ``<skipped>`` (``<failure>`` if P002 is an error)
=================================  =================================================

Names hold no line numbers, so a test keeps its name when lines are inserted
above it: ``claim ≈ 12 days``, ``Question 1: code 2 + 2 = 5``, ``problem
Question 1``; a repeated name gets a per-file ordinal (``claim ≈ 12 days #2``).
The xsd has no line attribute on a test case: its ``<system-out>`` starts with
``path:line:column``.  The xsd allows ``skipped`` on ``<testsuite>`` only.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from scaling_core import Diagnostic, DocumentAnalysis, Severity
from scaling_core.document.results import CheckResult, ProblemResult
from scaling_core.render import location
from scaling_core.text import Span

#: The name of each file's test case for errors outside checks and problems.
OTHER_ERRORS = "other errors"
#: The longest check text a test name shows.
NAME_LIMIT = 100
#: Characters XML 1.0 cannot hold, not even as character references.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: What may lie between a claim's number and an error in its comment (``12 days<!-- ≈ nosuch``).
_CLAIM_COMMENT = re.compile(r"\s*<!--(?:(?!-->).)*", re.S)


@dataclass
class Case:
    """One test case: a name, its outcome (``failure``, ``error``, ``skipped`` or None) and its output."""

    name: str
    outcome: str | None = None
    message: str = ""
    detail: str = ""
    output: list[str] = field(default_factory=list)


def _clean(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _owned(analysis: DocumentAnalysis, check: CheckResult, order: list[int], starts: list[int]) -> list[int]:
    """The diagnostics about ``check`` (indices): inside its span or, for a claim, in the comment after its number."""
    start, bound = check.span.start, max(check.span.end, check.span.start + 1)
    if check.kind == "claim":
        comment = _CLAIM_COMMENT.match(analysis.text, check.span.end)
        bound = max(bound, comment.end() + 1) if comment else bound
    return order[bisect.bisect_left(starts, start) : bisect.bisect_left(starts, bound)]


def _where(analysis: DocumentAnalysis, path: str, offset: int) -> str:
    line, column = analysis.index.position(offset)
    return f"{path}:{line + 1}:{column + 1}"


def _describe(analysis: DocumentAnalysis, path: str, d: Diagnostic) -> str:
    """A diagnostic as compiler-style text: ``path:line:col: severity CODE: message``, its notes and related spans."""
    line, column, _, _ = location(analysis.index, d.span)
    lines = [f"{path}:{line}:{column}: {d.severity.label} {d.code}: {d.message}", *(f"  note: {n}" for n in d.notes)]
    lines += [f"  see {_where(analysis, path, r.span.start)}: {r.message}" for r in d.related]
    return "\n".join(lines)


def _subject(analysis: DocumentAnalysis, check: CheckResult) -> str:
    """What a check's name shows: a claim's operator and number, else the check as written (spaces collapsed)."""
    if check.kind == "claim":
        return f"{check.op} {check.claim}"
    text = " ".join(analysis.text[check.span.start : check.span.end].split())
    return text if len(text) <= NAME_LIMIT else text[: NAME_LIMIT - 1] + "…"


def _check_case(analysis: DocumentAnalysis, path: str, check: CheckResult, owned: list[Diagnostic]) -> Case:
    name = f"{check.problem + ': ' if check.problem else ''}{check.kind} {_subject(analysis, check)}"
    case = Case(name, output=[f"{_where(analysis, path, check.span.start)}: {check.status}: {check.message}"])
    errors = [d for d in owned if d.severity is Severity.ERROR]
    details = "\n".join(_describe(analysis, path, d) for d in owned)
    if check.status == "fail" and errors:
        case.outcome, case.message, case.detail = "failure", check.message, details
    elif errors:  # not evaluated; or, were it ever so, an error next to a passing or suppressed check
        case.outcome, case.message, case.detail = "error", "; ".join(d.message for d in errors), details
    elif check.status == "skip":  # suppressed, or its error was made a warning or turned off
        case.outcome, case.message, case.detail = "skipped", check.message, details
    elif details:
        case.output.append(details)
    return case


def _problem_case(analysis: DocumentAnalysis, path: str, problem: ProblemResult, verdicts: list[Diagnostic]) -> Case:
    where = _where(analysis, path, problem.span.start)
    case = Case(
        f"problem {problem.ident}",
        output=[f"{where}: {problem.status}: {problem.passed} of {problem.total} checks pass"],
    )
    errors = [d for d in verdicts if d.severity is Severity.ERROR]
    if errors:  # P001, or P002 made an error
        case.outcome, case.message = "failure", errors[0].message
        case.detail = "\n".join(_describe(analysis, path, d) for d in errors)
    elif problem.status == "fail" and not verdicts:
        case.outcome, case.message = "skipped", f"suppressed: {problem.ident} fails"
    elif problem.status == "untested":
        case.outcome, case.message = "skipped", f"{problem.ident} has no checks"
    else:  # passes, or its P001 was made a warning
        case.output += [_describe(analysis, path, d) for d in verdicts]
    return case


def _other_case(analysis: DocumentAnalysis, path: str, rest: list[Diagnostic]) -> Case:
    case = Case(OTHER_ERRORS, output=[_describe(analysis, path, d) for d in rest if d.severity is Severity.WARNING])
    errors = [d for d in rest if d.severity is Severity.ERROR]
    if errors:
        count = f"{len(errors)} error" + "s" * (len(errors) != 1)
        case.outcome, case.message = "error", f"{count}: " + "; ".join(f"{d.code} {d.message}" for d in errors)
        case.detail = "\n".join(_describe(analysis, path, d) for d in errors)
    return case


def testcases(analysis: DocumentAnalysis, path: str) -> list[Case]:
    """The test cases of one file, in document order, then ``other errors``; names unique within the file."""
    diagnostics = analysis.diagnostics
    verdict_codes = ("P001", "P002")
    order = sorted(
        (n for n, d in enumerate(diagnostics) if d.code not in verdict_codes), key=lambda n: diagnostics[n].span.start
    )
    starts = [diagnostics[n].span.start for n in order]
    claimed: set[int] = set()
    cases = []
    for check in analysis.checks:
        owned = [n for n in _owned(analysis, check, order, starts) if n not in claimed]
        claimed.update(owned)
        cases.append(_check_case(analysis, path, check, [diagnostics[n] for n in owned]))
    verdicts: dict[Span, list[int]] = {}
    for n, d in enumerate(diagnostics):
        if d.code in verdict_codes:
            verdicts.setdefault(d.span, []).append(n)
    for problem in analysis.problems:
        mine = verdicts.pop(problem.title_span, [])
        claimed.update(mine)
        cases.append(_problem_case(analysis, path, problem, [diagnostics[n] for n in mine]))
    cases.append(_other_case(analysis, path, [d for n, d in enumerate(diagnostics) if n not in claimed]))
    return _numbered(cases)


def _numbered(cases: list[Case]) -> list[Case]:
    """Give repeated names an ordinal: ``name``, ``name #2``, ``name #3``."""
    used = {case.name for case in cases}
    seen: dict[str, int] = {}
    for case in cases:
        count = seen[case.name] = seen.get(case.name, 0) + 1
        if count > 1:
            while f"{case.name} #{count}" in used:
                count += 1
            seen[case.name] = count
            case.name = f"{case.name} #{count}"
            used.add(case.name)
    return cases


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def _suite(
    path: str, cases: list[Case], seconds: float, quoteattr: Callable[[str], str], escape: Callable[[str], str]
) -> tuple[str, dict[str, int]]:
    counts = {
        "tests": len(cases),
        **{kind: sum(c.outcome == kind for c in cases) for kind in ("failure", "error", "skipped")},
    }
    name = quoteattr(_clean(path))
    attrs = (f'name={name} tests="{counts["tests"]}" failures="{counts["failure"]}" errors="{counts["error"]}" '
             f'skipped="{counts["skipped"]}" time="{_seconds(seconds)}" file={name}')  # fmt: skip
    lines = [f"  <testsuite {attrs}>"]
    for case in cases:
        inner = ""
        if case.outcome:
            body = escape(_clean(case.detail))
            inner += f"<{case.outcome} message={quoteattr(_clean(case.message))}>{body}</{case.outcome}>"
        if case.output:
            inner += f"<system-out>{escape(_clean(chr(10).join(case.output)))}</system-out>"
        lines.append(f"    <testcase classname={name} name={quoteattr(_clean(case.name))}>{inner}</testcase>")
    lines.append("  </testsuite>")
    return "\n".join(lines), counts


def to_junit(analyses: list[DocumentAnalysis], paths: list[str], *, times: Sequence[float] | None = None) -> str:
    """JUnit XML: one suite per file, one case per check and per problem, one for the file's other errors.

    ``times`` are the seconds each file took to analyse (0 when not given).
    """
    from xml.sax.saxutils import escape, quoteattr  # imports urllib/http: keep it off the start-up path

    seconds = list(times) if times is not None else [0.0] * len(analyses)
    suites, totals = [], dict.fromkeys(("tests", "failure", "error", "skipped"), 0)
    for analysis, path, spent in zip(analyses, paths, seconds):
        text, counts = _suite(path, testcases(analysis, path), spent, quoteattr, lambda s: escape(s, {"\r": "&#13;"}))
        suites.append(text)
        totals = {key: totals[key] + counts[key] for key in totals}
    # junit-10.xsd allows no ``skipped`` on <testsuites>: each suite has its own.
    head = (f'<testsuites name="margin" tests="{totals["tests"]}" failures="{totals["failure"]}" '
            f'errors="{totals["error"]}" time="{_seconds(sum(seconds))}">')  # fmt: skip
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, *suites, "</testsuites>"])
