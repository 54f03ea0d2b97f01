"""Evaluate regions in document order: calc statements, code spans, claims.

``Interpreter.evaluate(region, scope)`` turns one region into its
:class:`~scaling_core.document.effects.Effects` (values, checks, definitions,
references, imports, diagnostics) without changing anything else;
``Interpreter.apply(effects, delta)`` adds them to the document's results
and scope.  The driver (``analysis.py``) decides between evaluating a region
and applying effects the region cache kept.  Checks of claimed values are in
``checking.py``; names and their scopes in ``scope.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from scaling_core import prelude
from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.checking import Checking
from scaling_core.document.effects import Effects, Imported, Recording, Results, region_start
from scaling_core.document.incremental import fingerprint
from scaling_core.document.latex import read_math
from scaling_core.document.pieces import CalcPiece
from scaling_core.document.regions import CalcRegion, ClaimRegion, CodeSpanRegion, MathRegion, Region
from scaling_core.document.results import Binding, CheckKind, Reference, ValueResult
from scaling_core.document.scope import RegionScope, Scope
from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.parse_memo import ParseMemo
from scaling_core.expr.values import (
    Budget,
    EvaluationError,
    Limits,
    Record,
    Value,
    describe_unit,
    unknown_value,
)
from scaling_core.text import Span
from scaling_core.units.display import format_quantity
from scaling_core.units.quantity import Quantity, UnitError, convert_dim
from scaling_core.units.registry import UnitRegistry

#: How a value is displayed (see :attr:`ValueResult.display_as`).
DisplayAs = str | tuple[float, str] | None
#: How values converted with ``-> unit`` are displayed, (factor, unit as written), each kept once: a draft writes few
#: units, and a pair with its own copy of the unit's text per value took ~2.6 MB of a 20 MB draft's analysis.
_DISPLAYS: dict[tuple[float, str], DisplayAs] = {}
#: At most this many are kept (the oldest are forgotten first).
_MOST_DISPLAYS = 4096


def shared_display(factor: float, unit: str) -> DisplayAs:
    """``(factor, unit)``, the pair already kept when there is one.

    Typed as a display, not as a pair: compiled (mypyc), a pair is a value of its own, made into a new object
    each time it is handed on, and the point is to hand on the one kept.
    """
    key = (factor, unit)
    shared = _DISPLAYS.get(key)
    if shared is None:
        if len(_DISPLAYS) >= _MOST_DISPLAYS:
            del _DISPLAYS[next(iter(_DISPLAYS))]
        _DISPLAYS[key] = key
        shared = _DISPLAYS[key]
    return shared


def internal_error(error: BaseException, span: Span, what: str = "this statement") -> Diagnostic:
    """E999: an exception that is a bug in Margin, reported where it happened instead of crashing the analysis."""
    detail = f"{type(error).__name__}: {error}"
    detail = detail if len(detail) <= 200 else detail[:199] + "…"
    return make_diagnostic("E999", f"internal error: {detail}; {what} is not checked, please report it", span)


class Interpreter(Checking):
    """Evaluates one document's regions and gathers their effects into results and a scope."""

    def __init__(
        self,
        registry: UnitRegistry,
        text: str,
        records: dict[str, Record],
        path: str,
        tolerance: float,
        limits: Limits,
        import_names: Callable[[ast.Import], dict[str, Binding]],
        *,
        stamp_bindings: bool = False,
        budget: Budget | None = None,
    ) -> None:
        """An interpreter for ``text`` (at ``path``), with no region applied yet.

        ``stamp_bindings``: each definition carries the fingerprint of its
        value (region-cache keys read it).  ``budget``: what the analysis, with
        what it imports, has spent of its limits; a fresh one when None.
        """
        self.registry = registry
        self.text = text
        self.records = records
        self.path = path
        self.tolerance = tolerance
        self.limits = limits
        self.import_names = import_names
        self.stamp_bindings = stamp_bindings
        #: What the applied effects add up to.
        self.results = Results()
        #: The document's scope, which :meth:`apply` writes into.
        self.scope = Scope(records)
        #: The region being evaluated: its view of the scope (begun anew for each) and what it has produced.
        self.region_scope = RegionScope(self.scope)
        self.out = Recording()
        self.evaluator = Evaluator(
            registry, self.region_scope.lookup, self.region_scope.visible_names, prelude.call, limits,
            budget=budget or Budget(limits),
        )  # fmt: skip
        self.evaluator.on_name = self.record_reference
        #: What the lexer and parser made of each text already read (drafts repeat code spans and blocks).
        self.parsed = ParseMemo(registry.__contains__)  # not self.is_unit: no cycle through the memo

    def release(self) -> None:
        """Break the interpreter <-> evaluator cycle once the analysis is done.

        Otherwise every analysis's result lists stay alive until the cyclic
        collector runs (measured: ~24k objects per keystroke on 10,000 lines,
        and 50-120 ms collector pauses in the language server).
        """
        self.evaluator.on_name = None
        del self.evaluator
        self.parsed.forget()

    # -- a region: evaluate, then apply ----------------------------------------
    def evaluate(self, region: Region, scope: Scope, *, quiet: bool = False) -> Effects:
        """Evaluate one region against ``scope``, which stays as it is: the region's effects.

        ``quiet``: an unknown name gets no did-you-mean (see :meth:`RegionScope.begin`).
        """
        start = region_start(region)
        budget = self.evaluator.budget
        if budget.stopped:
            return Effects(start, (), (), (), (), ())  # out of time
        self.region_scope.begin(scope, quiet=quiet)
        out = self.out
        out.problem = scope.problem
        spent, hints_before = budget.elements, len(self.evaluator.hints)
        try:
            if isinstance(region, CalcRegion):
                self.evaluate_calc_block(region)
            elif (why := budget.out_of_time()) is not None:
                out.diagnostics.append(make_diagnostic("E003", why, _statement_span(region)))
            elif isinstance(region, CodeSpanRegion):
                self.evaluate_code_span(region)
            elif isinstance(region, MathRegion):
                for equation in read_math(region, self.is_unit):  # LaTeX math: checked as code-span chains
                    self.check_chain(equation)
            else:
                self.check_claim(region)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: E999 here, the rest of the draft is still checked
            del self.evaluator.hints[hints_before:]
            out.diagnostics.append(internal_error(error, _statement_span(region)))
            if isinstance(region, ClaimRegion) and not any(c.span == region.number_span for c in out.checks):
                out.record_skip(CheckKind.CLAIM, region.number_span, region.op, region.number_text)
        except BaseException:
            out.effects(0)  # a failure that is not the draft's: leave the recording empty for the next region
            raise
        return out.effects(start, budget.elements - spent)

    def apply(
        self,
        effects: Effects,
        delta: int,
        *,
        replayed: bool = True,
        names: Callable[[str], Binding | None] | None = None,
    ) -> tuple[Binding, ...]:
        """Add a region's effects to the results and the scope, ``delta`` further on than recorded.

        Effects just evaluated (``replayed=False``) go in as they are; replayed
        ones are moved, and their references re-resolved against the scope now
        (or with ``names``, which finds the names a forward reference was evaluated with).
        Returns the region's definitions as added.
        """
        resolve = (names or self.scope.binding) if replayed else None
        if replayed and effects.elements:
            self.evaluator.budget.elements += effects.elements  # as evaluating it again would have spent
        bindings = self.results.add(effects, delta, resolve)
        if bindings or effects.imports:
            self.scope.add(bindings, effects.imports)
        return bindings

    # -- calc blocks -------------------------------------------------------------
    def evaluate_calc_block(self, region: CalcRegion) -> None:
        """Lex, parse and run every statement of a calc block (or of a piece of a long one, ``pieces.py``)."""
        if isinstance(region, CalcPiece):
            lexed, statements, problems = self.parsed.block(self.text, region.lines, region.span.end,
                                                            region.following, region.contiguous)  # fmt: skip
        else:
            lexed, statements, problems = self.parsed.block(self.text, region.lines, region.span.end)
        self.out.diagnostics.extend(lexed)
        self.out.diagnostics.extend(self.with_suggestions(d) for d in problems)
        for statement in statements:
            self.run_statement(statement)

    def run_statement(self, statement: ast.Statement) -> None:
        """Run one statement; failures become diagnostics (a bug in Margin too: E999 at the statement)."""
        out = self.out
        budget = self.evaluator.budget
        if budget.stopped:
            return
        why = budget.out_of_time()
        if why is not None:
            out.diagnostics.append(make_diagnostic("E003", why, statement.span))
            return
        hints_before = len(self.evaluator.hints)
        try:
            if isinstance(statement, ast.Import):
                self.run_import(statement)
            elif isinstance(statement, ast.Definition):
                value, display_as = self.value_and_display(statement.expr, statement.convert)
                self.define(statement.name, value, statement.name_span, statement.expr)
                out.values.append(
                    ValueResult.at(statement.span, display_as, _quantity(value), statement.name, written=True)
                )
            elif isinstance(statement, ast.Show):
                value, display_as = self.value_and_display(statement.expr, statement.convert)
                out.values.append(ValueResult.at(statement.span, display_as, _quantity(value), None, written=True))
            else:
                self.check_calc(statement)
        except EvaluationError as failure:
            out.diagnostics.append(failure.diagnostic)
            if isinstance(statement, ast.Definition) and failure.diagnostic.code == "T003":  # nor are its uses
                reason = failure.diagnostic.message.removeprefix("untested: ").split(" is not known: ", 1)[-1]
                self.define(statement.name, unknown_value(statement.name, reason), statement.name_span, statement.expr)
            if isinstance(statement, ast.Check):
                out.record_skip(CheckKind.CALC, statement.span, statement.op, self.source(statement.right.span))
        except Exception as error:  # noqa: BLE001 - a bug in Margin: E999 at this statement, the others still run
            out.diagnostics.append(internal_error(error, statement.span))
            if isinstance(statement, ast.Check):
                out.record_skip(CheckKind.CALC, statement.span, statement.op, self.source(statement.right.span))
        self.keep_hints(hints_before)

    def run_inline(self, statement: ast.Show) -> None:
        """Run an inline value's expression; as in claims, a bare word is a name before it is a unit."""
        try:
            self.names_before_units(statement.expr)
        except EvaluationError as failure:
            self.out.diagnostics.append(failure.diagnostic)
            return
        self.run_statement(statement)

    def run_import(self, statement: ast.Import) -> None:
        """Bring in the names another draft exports (a failed import still counts as one)."""
        imports, after = self.out.imports, len(self.out.bindings)
        imports.append(Imported(statement.path, {}, after))
        names = self.import_names(statement)
        imports[-1] = Imported(statement.path, names, after)
        self.region_scope.add_imported(names)

    def define(self, name: str, value: Value, span: Span, expr: ast.Expr | None = None) -> None:
        """Define ``name`` in the current scope (hint N008 if it is already defined there)."""
        source = self.source(expr.span) if expr is not None else ""
        stamp = fingerprint(value) if self.stamp_bindings else None
        binding = Binding.at(name, value, span, self.path, expr is not None, source, stamp)
        hint = self.region_scope.bind(binding)
        if hint is not None:
            self.out.diagnostics.append(hint)
        self.out.bindings.append(binding)

    def record_reference(self, node: ast.Name) -> None:
        """Remember which definition a name just looked up resolved to (the evaluator calls this after the lookup)."""
        self.out.references.append(Reference.at(node.span, node.name, self.region_scope.found))

    def value_and_display(self, expr: ast.Expr, convert: ast.UnitExpr | None) -> tuple[Value, DisplayAs]:
        """A statement's value (converted after ``-> unit``) and how to display it."""
        value = self.evaluator.statement_value(expr)
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
        return Quantity(converted.value, converted.dim, False, label), shared_display(factor, convert.text)

    # -- code spans --------------------------------------------------------------
    def evaluate_code_span(self, region: CodeSpanRegion) -> None:
        """Check a code span's equations (``expr = value`` chains, see ``expr/chain.py``) or show a ``{calc}`` role's value.

        :meth:`evaluate` sends only the code spans that may be either (a role, or text with ``=``, ``≈`` or ``~``).
        """
        if not region.role:
            # A text read before in this analysis is checked where it was read, and what that finds is moved
            # here: the same text there says the same, and moving the results costs less than moving the trees.
            equations, delta = self.parsed.code_span(region.text, region.content_span.start)
            marks = self.out.marks() if delta else None
            for equation in equations:
                self.check_chain(equation)
            if marks is not None:
                self.out.move_since(marks, delta)
            return
        lexed, statements, problems = self.parsed.inline(region.text, region.content_span.start)
        if lexed:
            return
        if problems or len(statements) != 1 or not isinstance(statements[0], ast.Show):
            self.out.diagnostics.extend(
                problems or [make_diagnostic("S001", "{calc} needs one expression", region.content_span)]
            )
            return
        hints_before = len(self.evaluator.hints)
        self.run_inline(statements[0])
        values = self.out.values
        if values and values[-1].span == statements[0].span:
            last = values.pop()
            values.append(ValueResult.at(region.span, last.display_as, last.quantity, None, True, last.written))
        del self.evaluator.hints[hints_before:]


def _statement_span(region: Region) -> Span:
    """Where a region's statement is written: a claim's number, a code span's or math's content."""
    if isinstance(region, ClaimRegion):
        return region.number_span
    if isinstance(region, (CodeSpanRegion, MathRegion)):
        return region.content_span
    return region.span


def _quantity(value: Value) -> Quantity | None:
    return value if isinstance(value, Quantity) else None
