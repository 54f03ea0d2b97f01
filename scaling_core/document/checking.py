"""Checking what a draft claims: calc-block checks, code-span chains, prose claims.

Each compares a computed value with a claimed one under the tolerance policy
(``expr/compare.py``: the last printed digit of the claim, or an explicit
``± tol``) and records the outcome in the region's :class:`Recording`.
Mixed into the :class:`~scaling_core.document.interpret.Interpreter`.
"""

from __future__ import annotations

import math
from dataclasses import replace

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.effects import Recording
from scaling_core.document.names import bare_unit_name, bare_unit_note
from scaling_core.document.prose import written_number
from scaling_core.document.regions import ClaimRegion
from scaling_core.document.results import CheckKind
from scaling_core.expr import syntax as ast
from scaling_core.expr.chain import ChainLink, Equation, chain_parts, computes, skipped_spans
from scaling_core.expr.compare import Outcome, compare, last_digit_unit, mismatched_lengths
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.lexer import MAGNITUDE_SUFFIXES
from scaling_core.expr.parse_memo import ParseMemo
from scaling_core.expr.tokens import canonical_comparison
from scaling_core.expr.values import (
    PROSE_CUTOFF,
    UNIT_AFTER_NUMBER_CUTOFF,
    EvaluationError,
    ShapeValue,
    Value,
    describe_unit,
    did_you_mean,
    mismatch_message,
)
from scaling_core.text import Span
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity, UnitError
from scaling_core.units.registry import UnitRegistry

#: Errors that mean a code span is not a calculation (unknown names or units), not a wrong one.
_UNKNOWN = {"N001", "N002", "N003", "N004", "N005"}
_INFORMATION = dimension.pack({"information": 1})
_FLIPPED = {"<": ">", ">": "<", "≤": "≥", "≥": "≤"}


class Checking:
    """Checks of claimed values against computed ones (mixed into the interpreter)."""

    #: The interpreter's ``release`` deletes the evaluator (a class compiled with mypyc must be told that it may).
    __deletable__ = ("evaluator",)

    registry: UnitRegistry
    text: str
    tolerance: float
    evaluator: Evaluator
    #: What the region being evaluated has produced so far.
    out: Recording
    #: What the lexer and parser made of each text already read.
    parsed: ParseMemo

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
        left_value = self.evaluator.statement_value(check.left)
        right = self.evaluator.statement_quantity(check.right)
        left = self.compared_quantity(left_value, check.left, right)
        ulp, unit_factor = self.literal_precision(check.right)
        relative, absolute = self.tolerance_of(check.tolerance)
        outcome = self.outcome(left, check.op, right, check.op_span, ulp, unit_factor, relative, absolute)
        self.out.report(CheckKind.CALC, check.span, check.op, self.source(check.right.span), outcome, check.span, None)

    def tolerance_of(self, tolerance: ast.Tolerance | None) -> tuple[float | None, Quantity | None]:
        """An explicit tolerance as (relative, absolute quantity)."""
        if tolerance is None:
            return None, None
        if tolerance.relative is not None:
            if not math.isfinite(tolerance.relative):
                raise self.evaluator.fail("E002", "the tolerance is not a finite number", tolerance.span)
            return tolerance.relative, None
        assert tolerance.absolute is not None
        return None, self.evaluator.quantity(tolerance.absolute)

    def literal_precision(self, expr: ast.Expr) -> tuple[float, float]:
        """One unit in the last printed digit of a literal claim, and its unit factor.

        The number as written sets the precision, whatever unit follows it,
        spaced or not: ``1923 tokens / sec`` and ``4.2GB / sequence`` are
        precise to their number's last digit, scaled by the unit.  A claim
        that is any other expression has no printed precision (0).
        """
        scales: list[tuple[str, ast.Expr]] = []  # `1923 tokens / sec`: the unit words after the number
        while isinstance(expr, ast.Binary) and expr.op in ("*", "/"):
            scales.append((expr.op, expr.right))
            expr = expr.left  # a loop, not recursion: a claim may be a long product
        if isinstance(expr, ast.Unary):
            ulp, factor = self.literal_precision(expr.operand)
        elif isinstance(expr, ast.Number):
            text = expr.text.rstrip("kKMBT") if expr.text[-1:] in MAGNITUDE_SUFFIXES else expr.text
            ulp, factor = last_digit_unit(text) * MAGNITUDE_SUFFIXES.get(expr.text[-1:], 1.0), 1.0
        elif isinstance(expr, ast.WithUnit) and isinstance(expr.operand, (ast.Number, ast.Unary)):
            ulp, _ = self.literal_precision(expr.operand)
            factor, _dim, _label = self.evaluator.unit(expr.unit)
            ulp *= factor
        else:
            return 0.0, 1.0
        for op, right in reversed(scales):
            scale = self.unit_scale(right)
            if scale is None or not ulp:
                return 0.0, 1.0
            scale = scale if op == "*" else 1 / scale
            ulp, factor = ulp * scale, factor * scale
        return ulp, factor

    def unit_scale(self, expr: ast.Expr) -> float | None:
        """The factor of a unit written as names (``sec``, ``tokens / sec``), or None if ``expr`` is not one.

        A name the draft defines is a value, not a unit.  A product of units
        too large or small for a float is not one either.
        """
        factors: list[tuple[str, ast.Expr]] = []
        while isinstance(expr, ast.Binary) and expr.op in ("*", "/"):
            factors.append((expr.op, expr.right))
            expr = expr.left  # a loop, not recursion: `ms * ms * …` may be long
        if not isinstance(expr, ast.Name):
            return None
        unit = self.registry.lookup(expr.name)
        if unit is None or self.evaluator.lookup(expr.name) is not None:
            return None
        if not (len(expr.name) > 1 or expr.name in ("s", "h")):
            return None
        total = unit.factor
        for op, right in reversed(factors):
            scale = self.unit_scale(right)
            if scale is None:
                return None
            total = total * scale if op == "*" else total / scale
        return total if 0 < abs(total) < math.inf else None

    def compared_quantity(self, value: Value, expr: ast.Expr, claimed: Quantity) -> Quantity:
        """The checked side ``expr`` (of value ``value``) as a quantity to compare with ``claimed``.

        A shape compared with a quantity of information is its bytes
        (``bf16[4096, 7168] = 58.7MB``); compared with anything else it stays
        error U006, which names its fields (elements or bytes is the author's call).
        """
        if isinstance(value, Quantity):
            return value
        if isinstance(value, ShapeValue):
            if claimed.dim == _INFORMATION and not claimed.free:
                return value.fields()["bytes"]
            fields = ", ".join(sorted(value.fields()))
            note = "a shape checked against a size (58.7MB) compares its bytes; against a plain number, write .size or .bytes"
            raise self.evaluator.fail(
                "U006", f"a shape is not a number; use one of its fields: {fields}", expr.span, (note,)
            )
        return self.evaluator.quantity(expr)

    def outcome(
        self, computed: Quantity, op: str, claimed: Quantity, span: Span,
        ulp: float, unit_factor: float, relative: float | None, absolute: Quantity | None,
    ) -> Outcome:  # fmt: skip
        """Compare with the tolerance policy; a unit conflict becomes U001 at ``span``.

        A claim written as a number (it has a printed digit) means its unit as
        written: ``6.9e6 tokens / hour`` is a rate, even though a count unit
        alone would leave its numerator's unit to inference.
        """
        if ulp and claimed.free and claimed.dim:
            claimed = Quantity(claimed.value, claimed.dim, False, claimed.label)
        mismatch = mismatched_lengths(computed, claimed, absolute)
        if mismatch is not None:
            raise self.evaluator.fail("E005", mismatch, span)
        try:
            return compare(
                computed, op, claimed, ulp=ulp, relative_tolerance=self.tolerance,
                explicit_relative=relative, explicit_absolute=absolute, claim_unit_factor=unit_factor,
            )  # fmt: skip
        except UnitError as error:
            error.operation = "compare"
            raise self.evaluator.fail("U001", mismatch_message(error), span) from None

    # -- code spans ------------------------------------------------------------
    def check_chain(self, equation: Equation) -> None:
        """Check an equation of a code span: each link against the last value; each skip is hint C002.

        A link that cannot be read cuts the chain (nothing is compared across
        it); a link naming something unknown is left out and the others are
        compared across it.  A link is compared approximately when ``≈`` or
        ``~`` stands anywhere between it and the last value, else to the last
        value's printed digit.  An equation with nothing computed (``x = 5``)
        is code, not a check.
        """
        links = equation.links
        hints_before = len(self.evaluator.hints)
        values: list[Value | None] = []
        unknown: list[tuple[Span, str]] = []
        errors: list[Diagnostic] = []
        for link in links:
            value = None
            if link.expr is not None:
                try:
                    value = self.evaluator.statement_value(link.expr)
                except EvaluationError as failure:
                    if failure.diagnostic.code in _UNKNOWN:
                        unknown.append((link.span, self.unknown_reason(failure.diagnostic)))
                    else:
                        errors.append(failure.diagnostic)
            values.append(value)
        unchecked: list[tuple[int, int]] = []  # (first, last) link of each part with a computation but no check
        checked = False
        for first, last in chain_parts(links):
            readable = [i for i in range(first, last + 1) if values[i] is not None]
            if not any(computes(links[i].expr) for i in readable[:-1]):
                if any(computes(links[i].expr) for i in readable):
                    unchecked.append((first, last))
                continue
            checked = self.check_links(links, values, readable, errors) or checked
        del self.evaluator.hints[hints_before:]
        if not (equation.looks_checked or checked):
            return
        unknown += [(d.span, self.unknown_reason(d)) for d in errors if d.code in _UNKNOWN]  # in a tolerance
        self.out.diagnostics.extend(d for d in errors if d.code not in _UNKNOWN)
        if len(links) < 2:
            hint = f"not checked: cannot read '{self.source(equation.span)}'"
            self.out.diagnostics.append(make_diagnostic("C002", hint, equation.span))
            return
        for span, reason in unknown:
            self.out.diagnostics.append(make_diagnostic("C002", f"not checked: {reason}", span))
        for index, span in skipped_spans(links, unchecked):
            hint = f"not checked: cannot read '{self.source(links[index].span)}'"
            self.out.diagnostics.append(make_diagnostic("C002", hint, span))

    def check_links(
        self, links: tuple[ChainLink, ...], values: list[Value | None], readable: list[int], errors: list[Diagnostic]
    ) -> bool:
        """Check the ``readable`` links of one part of a chain against its last; whether any check was made."""
        claim = links[readable[-1]]
        assert claim.expr is not None
        claimed = values[readable[-1]]
        try:
            if not isinstance(claimed, Quantity):  # a shape or record as the last value
                claimed = self.evaluator.quantity(claim.expr)
            ulp, unit_factor = self.literal_precision(claim.expr)
            relative, absolute = self.tolerance_of(claim.tolerance)
        except EvaluationError as failure:
            errors.append(failure.diagnostic)
            return False
        end = claim.tolerance.span.end if claim.tolerance is not None else claim.expr.span.end
        made = False
        for index in readable[:-1]:
            expr, value = links[index].expr, values[index]
            assert expr is not None and value is not None
            op = "≈" if any(link.relation == "≈" for link in links[index + 1 : readable[-1] + 1]) else "="
            span = Span(expr.span.start, end)
            try:
                computed = self.compared_quantity(value, expr, claimed)
                outcome = self.outcome(computed, op, claimed, span, ulp, unit_factor, relative, absolute)
            except EvaluationError as failure:
                errors.append(failure.diagnostic)
                continue
            claim_text = self.source(claim.expr.span)
            self.out.report(CheckKind.CODE, span, op, claim_text, outcome, claim.expr.span, self.source(expr.span))
            made = True
        return made

    def unknown_reason(self, diagnostic: Diagnostic) -> str:
        """Why a link naming something unknown is skipped (from its evaluation error, without the scope's names)."""
        what = {"N001": "name", "N002": "unit", "N004": "function"}.get(diagnostic.code)
        return f"unknown {what} '{self.source(diagnostic.span)}'" if what else diagnostic.message

    # -- prose claims ----------------------------------------------------------
    def check_claim(self, region: ClaimRegion) -> None:
        """Check a prose claim: the number before ``<!-- OP expr -->`` against ``expr``."""
        problems, expr, tolerance, problem = self.parsed.claim(region.expr_text, region.expr_offset)
        if problems or problem:
            self.out.diagnostics.extend(self.with_suggestions(d) for d in (problems or [problem]))  # type: ignore[list-item]
            return
        assert expr is not None
        hints_before = len(self.evaluator.hints)
        references_before = len(self.out.references)
        # "the prose number OP the expression", recorded as "computed OP' claim" like every other check.
        op = canonical_comparison(region.op)
        op = _FLIPPED.get(op, op)
        try:
            claimed, ulp, factor = self.prose_quantity(region)
            self.names_before_units(expr)
            computed = self.evaluator.statement_quantity(expr)
            relative, absolute = self.tolerance_of(tolerance)
            try:
                outcome = self.outcome(computed, op, claimed, region.number_span, ulp, factor, relative, absolute)
            except EvaluationError as failure:
                if failure.diagnostic.code != "U001":
                    raise
                message = (
                    f"the claim {region.number_text} is in {describe_unit(claimed)} "
                    f"but '{region.expr_text.strip()}' is in {describe_unit(computed)}"
                )
                raise self.evaluator.fail("U001", message, region.number_span) from None
        except EvaluationError as failure:
            self.out.diagnostics.append(failure.diagnostic)
            self.out.record_skip(CheckKind.CLAIM, region.number_span, op, region.number_text)
        else:
            diagnostics_before = len(self.out.diagnostics)
            self.out.report(
                CheckKind.CLAIM, region.number_span, op, region.number_text, outcome, region.number_span, None
            )
            # A quick fix only from a value computed from defined names (a chip's too), never from literals alone.
            from_names = len(self.out.references) > references_before
            self.vet_fixes(diagnostics_before, region, computed, op, tolerance, from_names)
        self.keep_hints(hints_before)

    def names_before_units(self, expr: ast.Expr) -> None:
        """In a claim or inline value a bare word is a name: fail N001 where it would silently be a unit."""
        node = bare_unit_name(expr, lambda name: self.evaluator.lookup(name) is not None, self.registry)
        if node is not None:
            note = did_you_mean(node.name, self.evaluator.visible_names())
            notes = (note, bare_unit_note(node.name)) if note else (bare_unit_note(node.name),)
            raise self.evaluator.fail("N001", f"unknown name '{node.name}'", node.span, notes)

    def vet_fixes(
        self, start: int, region: ClaimRegion, computed: Quantity, op: str, tolerance: ast.Tolerance | None, keep: bool
    ) -> None:
        """Keep the quick fixes of the diagnostics from ``start`` on only if applying one makes the claim pass."""
        diagnostics = self.out.diagnostics
        for position in range(start, len(diagnostics)):
            diagnostic = diagnostics[position]
            if diagnostic.fixes:
                kept = tuple(
                    f for f in diagnostic.fixes if keep and self.passes_with(f.text, region, computed, op, tolerance)
                )
                if kept != diagnostic.fixes:
                    diagnostics[position] = replace(diagnostic, fixes=kept)

    def passes_with(
        self, number_text: str, region: ClaimRegion, computed: Quantity, op: str, tolerance: ast.Tolerance | None
    ) -> bool:
        """Whether the claim would pass with ``number_text`` written in place of its number."""
        try:
            claimed, ulp, factor = self.prose_quantity(replace(region, number_text=number_text))
            relative, absolute = self.tolerance_of(tolerance)
            outcome = self.outcome(computed, op, claimed, region.number_span, ulp, factor, relative, absolute)
        except EvaluationError:
            return False
        return outcome.passed and not outcome.implied

    def prose_quantity(self, region: ClaimRegion) -> tuple[Quantity, float, float]:
        """The claimed number as a quantity, its last-digit precision and unit factor.

        An unknown word after the number (``11 H100s``) is read as a count
        label, unless it is a near miss of a unit (``5 sceonds``).
        """
        number = written_number(region.number_text)
        assert number is not None
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
