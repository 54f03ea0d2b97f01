"""Evaluate regions in document order: calc statements, code spans, claims.

Holds the scope chain (top level plus the current problem's local scope) and
turns every outcome into values, check results and diagnostics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from scaling_core import prelude
from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.incremental import Effects, RegionCache, fingerprint, inputs_of
from scaling_core.document.prose import TRAILING_NUMBER, read_number
from scaling_core.document.regions import CalcRegion, ClaimRegion, CodeSpanRegion
from scaling_core.document.results import Binding, CheckKind, CheckResult, Reference, ValueResult
from scaling_core.document.segments import Segments
from scaling_core.document.shift import move_binding, move_check, move_reference, move_value, shift_diagnostic
from scaling_core.document.verdicts import CheckReporting
from scaling_core.expr import syntax as ast
from scaling_core.expr.compare import Outcome, compare, last_digit_unit
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.lexer import MAGNITUDE_SUFFIXES, tokenize
from scaling_core.expr.parser import parse_chain, parse_claim_expression, parse_statements
from scaling_core.expr.tokens import Token, TokenKind, canonical_comparison
from scaling_core.expr.values import (
    PROSE_CUTOFF,
    UNIT_AFTER_NUMBER_CUTOFF,
    EvaluationError,
    Limits,
    Value,
    describe_unit,
    did_you_mean,
    mismatch_message,
)
from scaling_core.text import Span
from scaling_core.units.display import format_quantity
from scaling_core.units.quantity import Quantity, UnitError, convert_dim
from scaling_core.units.registry import UnitRegistry

_UNKNOWN = {"N001", "N002", "N003", "N004", "N005"}
_FLIPPED = {"<": ">", ">": "<", "≤": "≥", "≥": "≤"}


@dataclass
class Interpreter(CheckReporting):
    """Evaluates one document's regions against a scope chain."""

    registry: UnitRegistry
    text: str
    records: dict[str, Value]
    path: str
    tolerance: float
    limits: Limits
    import_names: Callable[[ast.Import], dict[str, Binding]]
    top: dict[str, Binding] = field(default_factory=dict)
    local: dict[str, Binding] | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    values: Segments[ValueResult] = field(default_factory=Segments)
    checks: list[CheckResult] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    problem: str | None = None
    references: Segments[Reference] = field(default_factory=Segments)
    cache: RegionCache | None = None
    #: The targets of the ``import`` statements met, in order.
    imports: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.evaluator = Evaluator(self.registry, self.lookup, self.visible_names, prelude.call, self.limits)
        self.evaluator.on_name = self.record_reference

    def release(self) -> None:
        """Break the interpreter <-> evaluator cycle once the analysis is done.

        Otherwise every analysis's result lists stay alive until the cyclic
        collector runs (measured: ~24k objects per keystroke on 10,000 lines,
        and 50-120 ms collector pauses in the language server).
        """
        self.evaluator.on_name = None
        self.evaluator = None  # type: ignore[assignment]

    def record_reference(self, node: ast.Name) -> None:
        """Remember which definition a name resolved to."""
        self.references.append(Reference(node.span, node.name, self._binding(node.name)))

    # -- scope ---------------------------------------------------------------
    def lookup(self, name: str) -> Value | None:
        """The value a name has here: local scope, then top level, then chips."""
        found = self._binding(name)
        return found.value if found is not None else self.records.get(name)

    def visible_names(self) -> list[str]:
        """Every name visible here (for did-you-mean)."""
        return [*self.top, *(self.local or {}), *self.records]

    def bind(self, name: str, value: Value, span: Span, expr: ast.Expr | None = None) -> None:
        """Define ``name`` in the current scope (hint N008 if it shadows one there)."""
        scope = self.local if self.local is not None else self.top
        earlier = scope.get(name)
        if earlier is not None:
            self.diagnostics.append(make_diagnostic("N008", f"'{name}' is redefined here; later uses see this value", span))
        source = self.source(expr.span) if expr is not None else ""
        stamp = fingerprint(value) if self.cache is not None else None  # only region keys need it
        binding = Binding(name, value, span, self.path, expr, source, stamp)
        scope[name] = binding
        self.bindings.append(binding)

    def source(self, span: Span) -> str:
        """The document text of ``span``."""
        return self.text[span.start : span.end]

    # -- incremental reuse ---------------------------------------------------
    def region(self, kind: CheckKind, start: int, end: int, evaluate: Callable[[], None]) -> None:
        """Evaluate a region, or replay its recorded effects if nothing it reads changed."""
        if self.cache is None:
            evaluate()
            return
        text = self.text[start:end]
        key = (kind, text, self.problem, self.local is not None, inputs_of(text, self.local, self.top, self.records))
        found = self.cache.get(key)
        if found is not None:
            self.replay(found, start - found.start)
            return
        marks = (len(self.diagnostics), len(self.values), len(self.checks), len(self.bindings), len(self.references))
        imports = len(self.imports)
        evaluate()
        if len(self.imports) > imports:
            return  # never recorded: the imported draft may have changed by the next analysis
        if any(d.code == "N001" for d in self.diagnostics[marks[0] :]):
            return  # its did-you-mean note lists every similar name in scope, not only the names it reads
        own = self.bindings[marks[3] :]
        references = self.references.tail(marks[4])
        owners = tuple(next((i for i, b in enumerate(own) if b is r.binding), None) for r in references)
        self.cache.put(key, Effects(
            start, tuple(self.diagnostics[marks[0]:]), tuple(self.values.tail(marks[1])), tuple(self.checks[marks[2]:]),
            tuple(own), tuple(references), owners,
        ))  # fmt: skip

    def replay(self, effects: Effects, delta: int) -> None:
        """Apply a region's recorded effects ``delta`` further on: results, definitions, references re-resolved.

        Definitions, checks and diagnostics are moved now (scopes, verdicts and
        publishing read them); values and references when first read.
        """
        bindings = tuple([move_binding(delta, b) for b in effects.bindings]) if delta and effects.bindings else effects.bindings
        if effects.references:
            resolved = [bindings[owner] if owner is not None else self._binding(reference.name)
                        for reference, owner in zip(effects.references, effects.owners)]  # fmt: skip
            self.references.add_moved(tuple(zip(effects.references, resolved)), partial(move_reference, delta))
        if delta:
            self.diagnostics.extend([shift_diagnostic(d, delta) for d in effects.diagnostics])
            self.values.add_moved(effects.values, partial(move_value, delta))
            self.checks.extend([move_check(delta, c) for c in effects.checks])
        else:
            self.diagnostics.extend(effects.diagnostics)
            self.values.extend(effects.values)
            self.checks.extend(effects.checks)
        scope = self.local if self.local is not None else self.top
        for binding in bindings:
            scope[binding.name] = binding
            self.bindings.append(binding)

    def _binding(self, name: str) -> Binding | None:
        local = self.local
        if local is not None and (found := local.get(name)) is not None:
            return found
        return self.top.get(name)

    # -- calc blocks ---------------------------------------------------------
    def calc_region(self, region: CalcRegion) -> None:
        """Lex, parse and evaluate every statement of a calc block."""
        tokens, problems = self.block_tokens(region)
        self.diagnostics.extend(problems)
        statements, problems = parse_statements(tokens, self.is_unit)
        self.diagnostics.extend(self.with_suggestions(d) for d in problems)
        for statement in statements:
            self.statement(statement)

    def block_tokens(self, region: CalcRegion) -> tuple[list[Token], list[Diagnostic]]:
        """Tokens of a block's lines, which may be interrupted by container prefixes (``> ``)."""
        if not region.lines:
            return [Token(TokenKind.EOF, "", Span(region.span.end, region.span.end))], []
        lines = region.lines
        if all(after[0] == offset + len(line) + 1 for (offset, line), after in zip(lines, lines[1:])):
            # One run of lines separated by "\n" (no container prefixes, no CR): lex it in one go.
            first = lines[0][0]
            return tokenize(self.text[first : lines[-1][0] + len(lines[-1][1])], first)
        return self.lines_tokens(region)

    def lines_tokens(self, region: CalcRegion) -> tuple[list[Token], list[Diagnostic]]:
        """Lex line by line, joining lines as the lexer joins them."""
        tokens: list[Token] = []
        diagnostics: list[Diagnostic] = []
        depth = 0
        for offset, line in region.lines:
            line_tokens, problems = tokenize(line, offset)
            diagnostics.extend(problems)
            if depth and _starts_definition(line_tokens):
                depth = 0  # an unclosed bracket must not swallow the next definition
            if tokens and depth == 0 and tokens[-1].kind is not TokenKind.NEWLINE:
                tokens.append(Token(TokenKind.NEWLINE, "\n", Span(offset, offset)))
            tokens.extend(line_tokens[:-1])
            if "(" in line or "[" in line or depth:
                depth = _bracket_depth(line_tokens, depth)
        tokens.append(Token(TokenKind.EOF, "", Span(region.span.end, region.span.end)))
        return tokens, diagnostics

    def is_unit(self, spelling: str) -> bool:
        """Whether ``spelling`` names a unit (the parser's unit test)."""
        return spelling in self.registry

    def statement(self, statement: ast.Statement) -> None:
        """Evaluate one statement; failures become diagnostics."""
        hints_before = len(self.evaluator.hints)
        try:
            if isinstance(statement, ast.Import):
                self.imports.append(statement.path)
                for name, binding in self.import_names(statement).items():
                    self.top[name] = binding
            elif isinstance(statement, ast.Definition):
                value, shown = self.shown_value(statement.expr, statement.convert)
                self.bind(statement.name, value, statement.name_span, statement.expr)
                self.values.append(ValueResult(statement.span, shown, _quantity(value), statement.name, expr=statement.expr))
            elif isinstance(statement, ast.Show):
                value, shown = self.shown_value(statement.expr, statement.convert)
                self.values.append(ValueResult(statement.span, shown, _quantity(value), None, expr=statement.expr))
            else:
                self.calc_check(statement)
        except EvaluationError as failure:
            self.diagnostics.append(failure.diagnostic)
            if isinstance(statement, ast.Check):
                self.record_skip(CheckKind.CALC, statement.span, statement.op, self.source(statement.right.span))
        self.diagnostics.extend(self.evaluator.hints[hints_before:])
        del self.evaluator.hints[hints_before:]

    def shown_value(self, expr: ast.Expr, convert: ast.UnitExpr | None) -> tuple[Value, str | tuple[float, str] | None]:
        """A statement's value and how to show it (see :attr:`ValueResult.shown`)."""
        value = self.evaluator.top(expr)
        if not isinstance(value, Quantity):
            return value, getattr(value, "title", "shape")
        if convert is None:
            return value, None
        factor, dim, label = self.evaluator.unit(convert)
        try:
            converted = convert_dim(value, dim)
        except UnitError:
            have = describe_unit(value)
            message = f"cannot convert {format_quantity(value)} ({have}) to {convert.text}: the dimensions differ"
            raise self.evaluator.fail("U002", message, convert.span) from None
        shown = Quantity(converted.value, converted.dim, False, label)
        return shown, (factor, convert.text)

    def calc_check(self, check: ast.Check) -> None:
        """Evaluate a calc-block check ``a OP b [± tol]``."""
        left = self.evaluator.top_quantity(check.left)
        right = self.evaluator.top_quantity(check.right)
        ulp, unit_factor = self.literal_precision(check.right)
        relative, absolute = self.tolerance_of(check.tolerance)
        outcome = self.outcome(left, check.op, right, check.op_span, ulp, unit_factor, relative, absolute)
        self.report(CheckKind.CALC, check.span, check.op, self.source(check.right.span), outcome, check.span, None)

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

    # -- code spans ----------------------------------------------------------
    def code_span(self, region: CodeSpanRegion) -> None:
        """Check a code span (``expr = value`` chains) or evaluate a ``{calc}`` role."""
        if not region.role and "=" not in region.text and "≈" not in region.text:
            return  # cannot be a checked chain: skip lexing ordinary code
        tokens, problems = tokenize(region.text, region.content_span.start)
        if problems:
            return
        if region.role:
            statements, problems = parse_statements(tokens, self.is_unit)
            if problems or len(statements) != 1 or not isinstance(statements[0], ast.Show):
                self.diagnostics.extend(problems or [make_diagnostic("S001", "{calc} needs one expression", region.content_span)])
                return
            hints_before = len(self.evaluator.hints)
            self.statement(statements[0])
            if self.values and self.values[-1].span == statements[0].span:
                last = self.values.pop()
                self.values.append(ValueResult(region.span, last.shown, last.quantity, None, True, last.expr))
            del self.evaluator.hints[hints_before:]
            return
        links = parse_chain(tokens, self.is_unit)
        if links is not None:
            self.chain(region, links)

    def chain(self, region: CodeSpanRegion, links: list) -> None:
        """Check every evaluable link of a chain against its last value."""
        hints_before = len(self.evaluator.hints)
        claim_expr = links[-1].expr
        op = "≈" if links[-1].relation == "≈" else "="
        try:
            claimed = self.evaluator.top_quantity(claim_expr)
        except EvaluationError:
            del self.evaluator.hints[hints_before:]
            return
        ulp, unit_factor = self.literal_precision(claim_expr)
        evaluated: list[tuple[ast.Expr, Quantity]] = []
        errors: list[Diagnostic] = []
        for link in links[:-1]:
            try:
                evaluated.append((link.expr, self.evaluator.top_quantity(link.expr)))
            except EvaluationError as failure:
                if failure.diagnostic.code not in _UNKNOWN:
                    errors.append(failure.diagnostic)
        del self.evaluator.hints[hints_before:]
        if not any(isinstance(expr, ast.Binary) for expr, _ in evaluated) and not errors:
            return
        self.diagnostics.extend(errors)
        for expr, value in evaluated:
            try:
                outcome = self.outcome(value, op, claimed, region.content_span, ulp, unit_factor, None, None)
            except EvaluationError as failure:
                self.diagnostics.append(failure.diagnostic)
                continue
            span = Span(expr.span.start, claim_expr.span.end)
            self.report(CheckKind.CODE, span, op, self.source(claim_expr.span), outcome, claim_expr.span, self.source(expr.span))

    # -- prose claims --------------------------------------------------------
    def claim(self, region: ClaimRegion) -> None:
        """Check a prose claim: the number before ``<!-- OP expr -->`` against ``expr``."""
        tokens, problems = tokenize(region.expr_text, region.expr_offset)
        expr, tolerance, problem = parse_claim_expression(tokens, self.is_unit)
        if problems or problem:
            self.diagnostics.extend(self.with_suggestions(d) for d in (problems or [problem]))  # type: ignore[list-item]
            return
        assert expr is not None
        hints_before = len(self.evaluator.hints)
        try:
            claimed, ulp, factor = self.prose_quantity(region)
            computed = self.evaluator.top_quantity(expr)
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
            self.diagnostics.append(failure.diagnostic)
            self.record_skip(CheckKind.CLAIM, region.number_span, region.op, region.number_text)
        else:
            self.report(CheckKind.CLAIM, region.number_span, region.op, region.number_text, outcome, region.number_span, None)
        self.diagnostics.extend(self.evaluator.hints[hints_before:])
        del self.evaluator.hints[hints_before:]

    def prose_quantity(self, region: ClaimRegion) -> tuple[Quantity, float, float]:
        """The claimed number as a quantity, its last-digit precision and unit factor.

        An unknown word after the number (``11 H100s``) is read as a count
        label, unless it is a near miss of a unit (``5 sceonds``).
        """
        match = TRAILING_NUMBER.search(region.number_text)
        assert match is not None
        number = read_number(match)
        if not math.isfinite(number.value * 0.0 + number.value):
            raise self.evaluator.fail("E002", f"{region.number_text} is beyond float64 (about 1.8e308)", region.number_span)
        factor, dim, label = 1.0, 0, None
        for position, spelling in enumerate(number.unit.split("/") if number.unit else ()):
            unit = self.registry.lookup(spelling)
            if unit is None:
                # Prose is English: only a close miss ("sceonds") is a typo, not "ways".
                note = did_you_mean(spelling, self.registry, cutoff=PROSE_CUTOFF)
                if note and region.unit_span is not None:
                    raise self.evaluator.fail("N002", f"unknown unit '{spelling}' in the claim", region.unit_span, (note,))
                label = label or spelling
                continue
            sign = 1 if position == 0 else -1
            factor *= unit.factor**sign
            dim += unit.dim * sign
            label = label or unit.count_label
        return Quantity(number.value * factor, dim, dim == 0, label), number.ulp * factor, factor

    # -- reporting -----------------------------------------------------------
    def with_suggestions(self, diagnostic: Diagnostic) -> Diagnostic:
        """Add a did-you-mean note to an unknown-unit diagnostic from the parser (its span is the unit)."""
        if diagnostic.code != "N002" or diagnostic.notes:
            return diagnostic
        note = did_you_mean(self.source(diagnostic.span), self.registry, cutoff=UNIT_AFTER_NUMBER_CUTOFF)
        if note is None:
            return diagnostic
        return make_diagnostic(diagnostic.code, diagnostic.message, diagnostic.span, notes=(note + " (or a missing '*')",))


def _starts_definition(tokens: list[Token]) -> bool:
    return len(tokens) > 2 and tokens[0].kind is TokenKind.IDENT and tokens[1].kind is TokenKind.ASSIGN


def _bracket_depth(tokens: list[Token], depth: int) -> int:
    for token in tokens:
        if token.kind in (TokenKind.LPAREN, TokenKind.LBRACKET):
            depth += 1
        elif token.kind in (TokenKind.RPAREN, TokenKind.RBRACKET):
            depth = max(depth - 1, 0)
    return depth


def _quantity(value: Value) -> Quantity | None:
    return value if isinstance(value, Quantity) else None
