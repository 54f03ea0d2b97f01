"""Check verdicts: messages, diagnostics and quick fixes in the author's style."""

from __future__ import annotations

from scaling_core.diagnostics import Diagnostic, Fix, make_diagnostic
from scaling_core.document.prose import TRAILING_NUMBER, read_number, restyle
from scaling_core.document.results import CheckResult, check_subject
from scaling_core.expr.compare import Outcome
from scaling_core.text import Span
from scaling_core.units.arrays import is_array, largest
from scaling_core.units.display import format_magnitude, format_quantity
from scaling_core.units.quantity import Quantity


class CheckReporting:
    """Turns check outcomes into results and diagnostics (mixed into the interpreter)."""

    diagnostics: list[Diagnostic]
    checks: list[CheckResult]
    problem: str | None

    def report(self, kind: str, span: Span, op: str, claim: str, outcome: Outcome, at: Span, left: str | None) -> None:
        """Record a check's result and, unless it passed, its diagnostic."""
        status = "pass" if outcome.passed else ("warn" if outcome.implied else "fail")
        message = None  # a pass's message is built when first read (CheckResult.message)
        if status == "warn":
            plain = format_magnitude(outcome.computed.value, 1.0, 4)
            what = check_subject(left, plain)
            if outcome.unannotated:
                what += " with no unit"
            message = f"{what}: it matches the claim {claim} only if read as {outcome.implied}; write the unit"
            self.diagnostics.append(make_diagnostic("U005", message, at))
        elif status == "fail":
            subject = check_subject(left, format_quantity(outcome.computed, 4))
            below, above = (format_quantity(Quantity(largest(x), outcome.claimed.dim), 2) for x in outcome.allowance)
            window = f"±{above}" if below == above else f"-{below}/+{above}"
            tolerance = f" (tolerance {window})" if op in ("=", "==", "≈", "~=") else ""
            message = f"{subject}, not {op} {claim}{tolerance}"
            notes = (f"off by {outcome.slip}",) if outcome.slip else ()
            fixes = self.fixes(kind, claim, outcome, at)
            self.diagnostics.append(make_diagnostic("C001", "check failed: " + message, at, notes=notes, fixes=fixes))
        allowance = (largest(outcome.allowance[0]), largest(outcome.allowance[1]))
        self.checks.append(CheckResult(kind, span, status, op, claim, outcome.computed, message, self.problem,
                                       outcome.claimed, allowance, left))  # fmt: skip

    def fixes(self, kind: str, claim: str, outcome: Outcome, at: Span) -> tuple[Fix, ...]:
        """The quick fix for a wrong prose claim: the computed value in the claim's style."""
        if kind != "claim" or is_array(outcome.computed.value):
            return ()
        match = TRAILING_NUMBER.search(claim)
        if match is None:
            return ()
        number = read_number(match)
        scale = outcome.claimed.value / number.value if number.value else 1.0
        if not scale:
            return ()
        text = restyle(float(outcome.computed.value) / scale, match.group("num") + (match.group("exp") or ""))
        replacement = text + claim[match.end("exp") if match.group("exp") else match.end("num") :]
        return (Fix(f"Replace {claim} with {replacement}", at, replacement),)

    def record_skip(self, kind: str, span: Span, op: str, claim: str) -> None:
        """Record a check that could not be evaluated (its error is reported separately)."""
        self.checks.append(CheckResult(kind, span, "skip", op, claim, None, "not evaluated", self.problem))

