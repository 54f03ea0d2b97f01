"""Verdicts: each check's (message, diagnostic, quick fix in the author's style) and each problem's."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from typing import TypeVar

from scaling_core.diagnostics import Diagnostic, Fix, Related, make_diagnostic
from scaling_core.document.prose import TRAILING_NUMBER, read_number, restyle
from scaling_core.document.regions import ProblemRegion
from scaling_core.document.results import (
    CheckKind,
    CheckResult,
    CheckStatus,
    ProblemResult,
    ProblemStatus,
    check_subject,
)
from scaling_core.document.segments import Segments
from scaling_core.document.sorted_on_read import SortedOnRead
from scaling_core.expr.compare import Outcome
from scaling_core.text import Span
from scaling_core.units.arrays import is_array, largest
from scaling_core.units.display import (
    format_computed,
    format_magnitude,
    format_number,
    format_quantity,
    format_unitless,
)
from scaling_core.units.quantity import Quantity

#: A claim's leading number (``13`` in ``13ms``); what follows is its unit as written.
_LEADING_NUMBER = re.compile(r"\s*[-+−]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")

#: Enum members looked up once (``CheckStatus.PASS`` costs ~0.3 µs on Python 3.11; this runs per check).
_PASS, _WARN, _FAIL = CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL


class CheckReporting:
    """Turns check outcomes into results and diagnostics (mixed into a region's ``Recording``)."""

    __slots__ = ()
    diagnostics: list[Diagnostic]
    checks: list[CheckResult]
    problem: str | None

    def report(
        self, kind: CheckKind, span: Span, op: str, claim: str, outcome: Outcome, at: Span, left: str | None
    ) -> None:
        """Record a check's result and, unless it passed, its diagnostic."""
        status = _PASS if outcome.passed else (_WARN if outcome.implied else _FAIL)
        message = None  # a pass's message is built when first read (CheckResult.message)
        if status is _WARN:
            value = outcome.computed.value
            what = check_subject(
                left, format_unitless(value, 4) if outcome.unannotated else format_magnitude(value, 1.0, 4)
            )
            message = f"{what}: it matches the claim {claim} only if read as {outcome.implied}; write the unit"
            self.diagnostics.append(make_diagnostic("U005", message, at))
        elif status is _FAIL:
            subject = check_subject(left, format_computed(outcome.computed, outcome.claimed, 4))
            below, above = (format_quantity(Quantity(largest(x), outcome.claimed.dim), 2) for x in outcome.allowance)
            window = f"±{above}" if below == above else f"-{below}/+{above}"
            tolerance = f" (tolerance {window})" if op in ("=", "==", "≈", "~=") else ""
            message = f"{subject}, not {op} {claim}{tolerance}"
            if outcome.nearest is not None:
                message += "; " + nearest_reading(claim, *outcome.nearest, outcome.claimed)
            notes = (f"off by {outcome.slip}",) if outcome.slip else ()
            fixes = self.fixes(kind, claim, outcome, at)
            self.diagnostics.append(make_diagnostic("C001", "check failed: " + message, at, notes=notes, fixes=fixes))
        allowance = (largest(outcome.allowance[0]), largest(outcome.allowance[1]))
        self.checks.append(CheckResult.at(kind, span, status, op, claim, outcome.computed, message, self.problem,
                                       outcome.claimed, allowance, left))  # fmt: skip

    def fixes(self, kind: CheckKind, claim: str, outcome: Outcome, at: Span) -> tuple[Fix, ...]:
        """The quick fix for a wrong prose claim: the computed value in the claim's style."""
        if kind != CheckKind.CLAIM or is_array(outcome.computed.value):
            return ()
        computed = outcome.computed
        if computed.dim != outcome.claimed.dim:  # no unit: only its reading in the claim's own unit passes
            if outcome.nearest is None or outcome.nearest[0] is not None:
                return ()
            computed = outcome.nearest[1]
        match = TRAILING_NUMBER.search(claim)
        if match is None:
            return ()
        number = read_number(match)
        scale = outcome.claimed.value / number.value if number.value else 1.0
        if not scale:
            return ()
        value = float(computed.value) / scale
        if not math.isfinite(value):
            return ()  # 1e308 s claimed in ms: no number to write
        text = restyle(value, match.group("num") + (match.group("exp") or ""))
        replacement = text + claim[match.end("exp") if match.group("exp") else match.end("num") :]
        return (Fix(f"Replace {claim} with {replacement}", at, replacement),)

    def record_skip(self, kind: CheckKind, span: Span, op: str, claim: str) -> None:
        """Record a check that could not be evaluated (its error is reported separately)."""
        self.checks.append(CheckResult.at(kind, span, CheckStatus.SKIP, op, claim, None, "not evaluated", self.problem))


def nearest_reading(claim: str, unit: str | None, reading: Quantity, claimed: Quantity) -> str:
    """How a plain number that fails reads nearest its claim: ``as GB/s it is 3.2 TB/s, 1/8 of the claim``.

    ``unit`` None is the claim's own unit, named as the claim writes it (``ms`` in ``13ms``).
    """
    if unit is None:
        match = _LEADING_NUMBER.match(claim)
        unit = claim[match.end() :].strip() if match else ""
    where = f"as {unit}" if unit else "in the claim's unit"
    if is_array(reading.value) or is_array(claimed.value):
        return f"{where} it is {format_quantity(reading, 4)}"  # a sweep: no single ratio
    ratio = float(reading.value) / float(claimed.value)  # both nonzero: compare chose this reading
    if ratio <= 0:
        return f"{where} it is {format_quantity(reading, 4)}"  # opposite signs: no share to speak of
    if ratio < 1 / 1.5:
        share = f"1/{format_number(1 / ratio, 3)} of the claim"
    else:
        share = f"{format_number(ratio, 3)}× the claim"
    return f"{where} it is {format_quantity(reading, 4)}, {share}"


# -- problems ----------------------------------------------------------------
def span_start(item: Diagnostic | CheckResult) -> int:
    """Where a diagnostic or check starts (the sort key of :func:`within`'s lists; a check's without making
    its span)."""
    return item.start if type(item) is CheckResult else item.span.start


Spanned = TypeVar("Spanned", Diagnostic, CheckResult)


def within(items: Sequence[Spanned], bounds: tuple[int, int], placed: bool = True) -> list[Spanned]:
    """Items (sorted by span start) whose span starts inside ``bounds``: of a :class:`Segments`, moving
    into place only the parts that may hold them (unless ``placed``, not those wholly inside: their
    items come as recorded, with their spans where they were then)."""
    if type(items) is Segments:  # not isinstance: see lookup.SpanIndex
        return items.window(bounds[0], bounds[1], span_start, placed)
    if type(items) is SortedOnRead:  # out of order, not sorted yet: sorting moves every item into place
        return items.window(bounds[0], bounds[1], placed)
    low = bisect.bisect_left(items, bounds[0], key=span_start)
    return list(items[low : bisect.bisect_left(items, bounds[1], lo=low, key=span_start)])


def problem_verdict(
    problem: ProblemRegion, checks: Sequence[CheckResult], error_starts: Sequence[int]
) -> ProblemResult:
    """A problem's status and counts, from the checks inside it (sorted by start) and whether an error starts
    inside it (``error_starts``: the errors' starts, in order; bisected without a key per step)."""
    inside = problem.span.start, problem.span.end
    mine = within(checks, inside, placed=False)  # their statuses and messages alone are read
    failed = sum(c.status == CheckStatus.FAIL for c in mine)
    first = bisect.bisect_left(error_starts, inside[0])
    failing = first < len(error_starts) and error_starts[first] < inside[1]
    passed = sum(c.status in (CheckStatus.PASS, CheckStatus.WARN) for c in mine)
    if failed or failing:
        status = ProblemStatus.FAIL
    elif not mine or (not passed and any(_not_evaluated(c) for c in mine)):
        status = ProblemStatus.UNTESTED  # no checks, or none with a known value (T003: untested, not passed)
    else:
        status = ProblemStatus.PASS
    return ProblemResult(
        problem.ident, problem.title, problem.span, problem.title_span, status, passed, failed, len(mine)
    )


def problem_diagnostic(
    problem: ProblemRegion, verdict: ProblemResult, checks: Sequence[CheckResult], errors: list[Diagnostic]
) -> Diagnostic:
    """The diagnostic of a problem that does not pass: P002 (no checks), P004 (none known), or P001 (failed)."""
    if verdict.status == ProblemStatus.UNTESTED and verdict.total:
        untested = sum(_not_evaluated(c) for c in within(checks, (problem.span.start, problem.span.end)))
        message = f"{problem.ident} is untested: none of its checks could be evaluated ({untested} untested)"
        return make_diagnostic("P004", message, problem.title_span)
    if verdict.status == ProblemStatus.UNTESTED:
        return make_diagnostic(
            "P002", f"{problem.ident} has no checks: add a calc check or a claim to its answer", problem.title_span
        )
    inside = problem.span.start, problem.span.end
    failing = (CheckStatus.FAIL, CheckStatus.SKIP)
    related = tuple(Related(c.span, c.message) for c in within(checks, inside) if c.status in failing)
    related = related or tuple(Related(d.span, d.message) for d in within(errors, inside))
    unevaluated = sum(_not_evaluated(c) for c in within(checks, inside))
    parts = [f"{verdict.failed} of {verdict.total} checks fail"] if verdict.failed else []
    if unevaluated:
        parts.append(f"{unevaluated} of {verdict.total} checks could not be evaluated")
    summary = "; ".join(parts) if parts else "its calculations have errors"
    return make_diagnostic("P001", f"{problem.ident} fails: {summary}", problem.title_span, related=related)


def _not_evaluated(check: CheckResult) -> bool:
    """A skipped check that was not suppressed or turned off: its calculation has an error."""
    if check.status != CheckStatus.SKIP:
        return False
    return not (check.message.startswith("suppressed: ") or check.message.split(":", 1)[0].endswith(" turned off"))
