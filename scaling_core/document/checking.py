"""Checking what a draft claims: calc-block checks, code-span chains, prose claims.

Each compares a computed value with a claimed one under the tolerance policy
(``expr/compare.py``: the last printed digit of the claim, or an explicit
``± tol``) and records the outcome in the region's :class:`Recording`.
Mixed into the :class:`~scaling_core.document.interpret.Interpreter`.
"""

from __future__ import annotations

import math

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.effects import Recording
from scaling_core.document.prose import TRAILING_NUMBER, read_number
from scaling_core.document.regions import ClaimRegion, CodeSpanRegion
from scaling_core.document.results import CheckKind
from scaling_core.expr import syntax as ast
from scaling_core.expr.compare import Outcome, compare, last_digit_unit
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.lexer import MAGNITUDE_SUFFIXES, tokenize
from scaling_core.expr.parser import ChainLink, parse_claim_expression
from scaling_core.expr.tokens import canonical_comparison
from scaling_core.expr.values import (
    PROSE_CUTOFF,
    UNIT_AFTER_NUMBER_CUTOFF,
    EvaluationError,
    describe_unit,
    did_you_mean,
    mismatch_message,
)
from scaling_core.text import Span
from scaling_core.units.quantity import Quantity, UnitError
from scaling_core.units.registry import UnitRegistry

#: Errors that mean a code span is not a calculation (unknown names or units), not a wrong one.
_UNKNOWN = {"N001", "N002", "N003", "N004", "N005"}
_FLIPPED = {"<": ">", ">": "<", "≤": "≥", "≥": "≤"}


class Checking:
    """Checks of claimed values against computed ones (mixed into the interpreter)."""

    registry: UnitRegistry
    text: str
    tolerance: float
    evaluator: Evaluator
    #: What the region being evaluated has produced so far.
    out: Recording

    def source(self, span: Span) -> str:
        """The document text of ``span``."""
        return self.text[span.start : span.end]

    def keep_hints(self, before: int) -> None:
        """Move the hints the evaluator gave since it had ``before`` of them into the region's diagnostics."""
        hints = self.evaluator.hints
        if len(hints) > before:  # rarely: tested first, as this runs after every statement
            self.out.diagnostics.extend(hints[before:])
            del hints[before:]

    def is_unit(self, spelling: str) -> bool:
        """Whether ``spelling`` names a unit (the parser's unit test)."""
        return spelling in self.registry

    # -- calc-block checks -----------------------------------------------------
    def check_calc(self, check: ast.Check) -> None:
        """Check a calc-block check ``a OP b [± tol]``."""
        left = self.evaluator.statement_quantity(check.left)
        right = self.evaluator.statement_quantity(check.right)
        ulp, unit_factor = self.literal_precision(check.right)
        relative, absolute = self.tolerance_of(check.tolerance)
        outcome = self.outcome(left, check.op, right, check.op_span, ulp, unit_factor, relative, absolute)
        self.out.report(CheckKind.CALC, check.span, check.op, self.source(check.right.span), outcome, check.span, None)

    def tolerance_of(self, tolerance: ast.Tolerance | None) -> tuple[float | None, Quantity | None]:
        """An explicit tolerance as (relative, absolute quantity)."""
        if tolerance is None:
            return None, None
        if tolerance.relative is not None:
            return tolerance.relative, None
        assert tolerance.absolute is not None
        return None, self.evaluator.quantity(tolerance.absolute)

    def literal_precision(self, expr: ast.Expr) -> tuple[float, float]:
        """One unit in the last printed digit of a literal claim, and its unit factor."""
        if isinstance(expr, ast.Unary):
            return self.literal_precision(expr.operand)
        if isinstance(expr, ast.Number):
            text = expr.text.rstrip("kKMBT") if expr.text[-1:] in MAGNITUDE_SUFFIXES else expr.text
            return last_digit_unit(text) * MAGNITUDE_SUFFIXES.get(expr.text[-1:], 1.0), 1.0
        if isinstance(expr, ast.WithUnit) and isinstance(expr.operand, (ast.Number, ast.Unary)):
            ulp, _ = self.literal_precision(expr.operand)
            factor, _dim, _label = self.evaluator.unit(expr.unit)
            return ulp * factor, factor
        return 0.0, 1.0

    def outcome(
        self, computed: Quantity, op: str, claimed: Quantity, span: Span,
        ulp: float, unit_factor: float, relative: float | None, absolute: Quantity | None,
    ) -> Outcome:  # fmt: skip
        """Compare with the tolerance policy; a unit conflict becomes U001 at ``span``."""
        try:
            return compare(
                computed, op, claimed, ulp=ulp, relative_tolerance=self.tolerance,
                explicit_relative=relative, explicit_absolute=absolute, claim_unit_factor=unit_factor,
            )  # fmt: skip
        except UnitError as error:
            error.operation = "compare"
            raise self.evaluator.fail("U001", mismatch_message(error), span) from None

    # -- code spans ------------------------------------------------------------
    def check_chain(self, region: CodeSpanRegion, links: list[ChainLink]) -> None:
        """Check every evaluable link of a code span's ``a = b = c`` chain against its last value."""
        hints_before = len(self.evaluator.hints)
        claim_expr = links[-1].expr
        op = "≈" if links[-1].relation == "≈" else "="
        try:
            claimed = self.evaluator.statement_quantity(claim_expr)
        except EvaluationError:
            del self.evaluator.hints[hints_before:]
            return
        ulp, unit_factor = self.literal_precision(claim_expr)
        evaluated: list[tuple[ast.Expr, Quantity]] = []
        errors: list[Diagnostic] = []
        for link in links[:-1]:
            try:
                evaluated.append((link.expr, self.evaluator.statement_quantity(link.expr)))
            except EvaluationError as failure:
                if failure.diagnostic.code not in _UNKNOWN:
                    errors.append(failure.diagnostic)
        del self.evaluator.hints[hints_before:]
        if not any(isinstance(expr, ast.Binary) for expr, _ in evaluated) and not errors:
            return
        self.out.diagnostics.extend(errors)
        for expr, value in evaluated:
            try:
                outcome = self.outcome(value, op, claimed, region.content_span, ulp, unit_factor, None, None)
            except EvaluationError as failure:
                self.out.diagnostics.append(failure.diagnostic)
                continue
            span = Span(expr.span.start, claim_expr.span.end)
            self.out.report(
                CheckKind.CODE, span, op, self.source(claim_expr.span), outcome, claim_expr.span, self.source(expr.span)
            )

    # -- prose claims ----------------------------------------------------------
    def check_claim(self, region: ClaimRegion) -> None:
        """Check a prose claim: the number before ``<!-- OP expr -->`` against ``expr``."""
        tokens, problems = tokenize(region.expr_text, region.expr_offset)
        expr, tolerance, problem = parse_claim_expression(tokens, self.is_unit)
        if problems or problem:
            self.out.diagnostics.extend(self.with_suggestions(d) for d in (problems or [problem]))  # type: ignore[list-item]
            return
        assert expr is not None
        hints_before = len(self.evaluator.hints)
        try:
            claimed, ulp, factor = self.prose_quantity(region)
            computed = self.evaluator.statement_quantity(expr)
            relative, absolute = self.tolerance_of(tolerance)
            op = canonical_comparison(region.op)
            op = _FLIPPED.get(op, op)
            try:
                outcome = self.outcome(computed, op, claimed, region.number_span, ulp, factor, relative, absolute)
            except EvaluationError:
                message = (
                    f"the claim {region.number_text} is in {describe_unit(claimed)} "
                    f"but '{region.expr_text.strip()}' is in {describe_unit(computed)}"
                )
                raise self.evaluator.fail("U001", message, region.number_span) from None
        except EvaluationError as failure:
            self.out.diagnostics.append(failure.diagnostic)
            self.out.record_skip(CheckKind.CLAIM, region.number_span, region.op, region.number_text)
        else:
            self.out.report(
                CheckKind.CLAIM, region.number_span, region.op, region.number_text, outcome, region.number_span, None
            )
        self.keep_hints(hints_before)

    def prose_quantity(self, region: ClaimRegion) -> tuple[Quantity, float, float]:
        """The claimed number as a quantity, its last-digit precision and unit factor.

        An unknown word after the number (``11 H100s``) is read as a count
        label, unless it is a near miss of a unit (``5 sceonds``).
        """
        match = TRAILING_NUMBER.search(region.number_text)
        assert match is not None
        number = read_number(match)
        if not math.isfinite(number.value * 0.0 + number.value):
            raise self.evaluator.fail(
                "E002", f"{region.number_text} is beyond float64 (about 1.8e308)", region.number_span
            )
        factor, dim, label = 1.0, 0, None
        for position, spelling in enumerate(number.unit.split("/") if number.unit else ()):
            unit = self.registry.lookup(spelling)
            if unit is None:
                # Prose is English: only a close miss ("sceonds") is a typo, not "ways".
                note = did_you_mean(spelling, self.registry, cutoff=PROSE_CUTOFF)
                if note and region.unit_span is not None:
                    raise self.evaluator.fail(
                        "N002", f"unknown unit '{spelling}' in the claim", region.unit_span, (note,)
                    )
                label = label or spelling
                continue
            sign = 1 if position == 0 else -1
            factor *= unit.factor**sign
            dim += unit.dim * sign
            label = label or unit.count_label
        return Quantity(number.value * factor, dim, dim == 0, label), number.ulp * factor, factor

    def with_suggestions(self, diagnostic: Diagnostic) -> Diagnostic:
        """Add a did-you-mean note to an unknown-unit diagnostic from the parser (its span is the unit)."""
        if diagnostic.code != "N002" or diagnostic.notes:
            return diagnostic
        note = did_you_mean(self.source(diagnostic.span), self.registry, cutoff=UNIT_AFTER_NUMBER_CUTOFF)
        if note is None:
            return diagnostic
        return make_diagnostic(
            diagnostic.code, diagnostic.message, diagnostic.span, notes=(note + " (or a missing '*')",)
        )
