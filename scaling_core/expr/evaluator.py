"""The bounded evaluator: syntax tree -> value, every failure a diagnostic.

No Python ``eval``: each node kind has one method, names resolve through a
lookup function given by the caller, fields exist only on records and
shapes, and calls go to the call handler given by the caller (for drafts,
:func:`scaling_core.prelude.call`: the allow-listed built-ins and the formula
library).  Limits (array elements, nesting) live on :class:`Limits`; float64
overflow, division by zero and domain errors are caught and reported at the
exact span.  This module imports nothing above ``expr/``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.expr import syntax as ast
from scaling_core.expr.values import (
    Budget,
    EvaluationError,
    Limits,
    Record,
    ShapeValue,
    Value,
    describe_unit,
    did_you_mean,
    mismatch_message,
)
from scaling_core.text import Span
from scaling_core.units import dimension
from scaling_core.units.arrays import is_array, numpy
from scaling_core.units.display import format_quantity
from scaling_core.units.quantity import Quantity, UnitError, convert_dim, scalar
from scaling_core.units.registry import Unit, UnitRegistry

isfinite = math.isfinite
_NOT_FINITE = "the result is not a finite number (overflow or invalid operation)"
#: Operators whose chains (``a + b + c …``) are evaluated left to right in a loop, not by recursion.
_LEFT_ASSOCIATIVE = frozenset(("+", "-", "*", "/"))

#: How the evaluator evaluates a call: ``call(evaluator, node)`` (see :mod:`scaling_core.prelude`).
CallHandler = Callable[["Evaluator", ast.Call], Value]


_NO_BUDGET = Budget(Limits())


@dataclass
class Evaluator:
    """Evaluates expressions against a name lookup; collects hints on the way."""

    registry: UnitRegistry
    lookup: Callable[[str], Value | None]
    visible_names: Callable[[], list[str]]
    #: Evaluates every call node: the caller decides what a draft can call.
    call: CallHandler
    limits: Limits = field(default_factory=Limits)
    hints: list[Diagnostic] = field(default_factory=list)
    #: When a list, every library formula call is recorded here (for derivations).
    trace: list[Any] | None = None
    #: Called with each name that resolves through ``lookup`` (for references).
    on_name: Callable[[ast.Name], None] | None = None
    #: What the analysis has spent of its limits (shared with child evaluators and imported drafts).
    budget: Budget = _NO_BUDGET  # replaced in __post_init__ when not given

    def __post_init__(self) -> None:
        if self.budget is _NO_BUDGET:
            self.budget = Budget(self.limits)

    def child(self, lookup: Callable[[str], Value | None]) -> Evaluator:
        """An evaluator for a formula body: its own names, the same units, limits and budget, no trace."""
        return Evaluator(
            self.registry, lookup, self.visible_names, self.call, self.limits, self.hints, budget=self.budget
        )

    def fail(self, code: str, message: str, span: Span, notes: tuple[str, ...] = ()) -> EvaluationError:
        """An error that stops this statement, carrying its diagnostic."""
        return EvaluationError(make_diagnostic(code, message, span, notes=notes))

    def quantity(self, expr: ast.Expr) -> Quantity:
        """Evaluate ``expr`` and require a quantity (not a record)."""
        # The commonest operands, a number or a name of a finite number, as value() reads them, without its
        # dispatch (one call per operand, not three: most of what an analysis evaluates is these).
        if type(expr) is ast.Number:
            if isfinite(expr.value):
                return Quantity(expr.value, 0, True, None)
        elif type(expr) is ast.Name:
            found = self.lookup(expr.name)
            if type(found) is Quantity and type(found.value) is float and isfinite(found.value):
                if self.on_name is not None:
                    self.on_name(expr)
                return found
        value = self.value(expr)
        if not isinstance(value, Quantity):
            if isinstance(value, Record) and "" in value.unknown:
                raise self.fail("T003", f"untested: '{value.name}' is not known: {value.unknown['']}", expr.span)
            kind = "a shape" if isinstance(value, ShapeValue) else f"the record '{value.name}'"
            fields = sorted(value.fields()) if isinstance(value, ShapeValue) else sorted(value.fields)
            raise self.fail("U006", f"{kind} is not a number; use one of its fields: {', '.join(fields)}", expr.span)
        return value

    def statement_value(self, expr: ast.Expr) -> Value:
        """Evaluate a whole statement's expression, bounding its unit exponents.

        Callers evaluate under :class:`~scaling_core.units.arrays.quiet_arrays`
        (once per document): overflow and invalid results are caught as E002 instead.
        """
        value = self.value(expr)
        if isinstance(value, Quantity) and value.dim and not dimension.is_representable(value.dim):
            raise self.fail("E003", f"a unit exponent beyond ±{dimension.MAX_EXPONENT}", expr.span)
        return value

    def statement_quantity(self, expr: ast.Expr) -> Quantity:
        """:meth:`statement_value` for statements that need a number."""
        value = self.statement_value(expr)
        return value if isinstance(value, Quantity) else self.quantity(expr)

    def value(self, expr: ast.Expr) -> Value:
        """Evaluate any expression."""
        kind = type(expr)
        method = _DISPATCH.get(kind)
        if method is None:
            method = _DISPATCH[kind] = getattr(Evaluator, "_eval_" + kind.__name__)
        try:
            result = method(self, expr)
        except UnitError as error:
            span = expr.op_span if isinstance(expr, ast.Binary) else expr.span
            code = "U006" if error.operation == "power" else "U001"
            raise self.fail(code, mismatch_message(error), span) from None
        except OverflowError:
            raise self.fail("E002", "the result overflows float64 (beyond about 1.8e308)", expr.span) from None
        except RecursionError:
            raise self.fail("E003", "expression nested too deeply", expr.span) from None
        if type(result) is Quantity:
            if type(result.value) is float:
                if not math.isfinite(result.value):
                    raise self.fail("E002", _NOT_FINITE, expr.span)
            elif kind is not ast.Name and kind is not ast.Field:
                self.spend(result, expr.span)
        return result

    def spend(self, result: Quantity, span: Span) -> None:
        """Count a sweep just computed against the analysis's budget; check it is finite and not empty."""
        value = result.value
        if not is_array(value):
            if not math.isfinite(value):
                raise self.fail("E002", _NOT_FINITE, span)
            return
        size = int(value.size)
        if not size:
            raise self.fail("E004", "an empty sweep has no value", span)
        budget = self.budget
        why = budget.room(size) or budget.out_of_time()
        if why is not None:
            raise self.fail("E003", why, span)
        budget.elements += size
        if not _is_finite(value):
            raise self.fail("E002", _NOT_FINITE, span)

    # -- nodes ---------------------------------------------------------------
    def _eval_Number(self, node: ast.Number) -> Quantity:
        return scalar(node.value)

    def _eval_Name(self, node: ast.Name) -> Value:
        found = self.lookup(node.name)
        if found is not None:
            if self.on_name is not None:
                self.on_name(node)
            return found
        unit = self.registry.lookup(node.name)
        if unit is not None and (len(node.name) > 1 or node.name in ("s", "h")):
            return Quantity(unit.factor, unit.dim, False, unit.count_label)
        note = did_you_mean(node.name, self.visible_names())
        notes = (note,) if note else ()
        raise self.fail("N001", f"unknown name '{node.name}'", node.span, notes)

    def _eval_WithUnit(self, node: ast.WithUnit) -> Quantity:
        operand = self.quantity(node.operand)
        factor, dim, label = self.unit(node.unit)
        if operand.dim and not operand.free:
            raise self.fail("U006", f"'{node.unit.text}' follows a value that already has a unit", node.unit.span)
        return Quantity(operand.value * factor, operand.dim + dim, operand.free and dim == 0, label)

    def _eval_Convert(self, node: ast.Convert) -> Quantity:
        operand = self.quantity(node.operand)
        _factor, dim, label = self.unit(node.unit)
        try:
            converted = convert_dim(operand, dim)
        except UnitError:
            have = describe_unit(operand)
            message = f"cannot convert {format_quantity(operand)} ({have}) to {node.unit.text}: the dimensions differ"
            raise self.fail("U002", message, node.unit.span) from None
        return Quantity(converted.value, converted.dim, False, label)

    def unit(self, unit: ast.UnitExpr) -> tuple[float, int, str | None]:
        """The factor, dimension and count label of a unit expression."""
        factor, dim, label = 1.0, 0, None
        for part in unit.factors:
            if abs(part.exponent) > dimension.MAX_EXPONENT:
                raise self.fail("E003", f"a unit exponent beyond ±{dimension.MAX_EXPONENT}", part.span)
            found = self._unit_of(part)
            factor *= found.factor**part.exponent
            dim += found.dim * part.exponent
            if found.count_label and part.exponent > 0:
                label = found.count_label
        return factor, dim, label

    def _unit_of(self, part: ast.UnitFactor) -> Unit:
        found = self.registry.lookup(part.spelling)
        if found is None:
            note = did_you_mean(part.spelling, self.registry)
            notes = (note,) if note else ()
            raise self.fail("N002", f"unknown unit '{part.spelling}'", part.span, notes)
        if found.hint == "U003":
            self.hints.append(make_diagnostic("U003", f"'{part.spelling}' is read as a rate (FLOP/s)", part.span))
        if part.spelling == "B":
            self.hints.append(make_diagnostic("U004", "'B' after a number is read as bytes", part.span))
        return found

    def _eval_Unary(self, node: ast.Unary) -> Quantity:
        operand = self.quantity(node.operand)
        return -operand if node.op == "-" else operand

    def _eval_Binary(self, node: ast.Binary) -> Quantity:
        # A flat chain (``1 + 2 + … + 5000``) nests to the left: walk down it and fold back up in a
        # loop, so its length costs no recursion; each step is checked as value() checks a node.
        leftmost = node.left
        if type(leftmost) is not ast.Binary or node.op not in _LEFT_ASSOCIATIVE:
            return self._binary(node, self.quantity(leftmost))
        spine = [node]
        while type(leftmost) is ast.Binary and leftmost.op in _LEFT_ASSOCIATIVE:
            spine.append(leftmost)
            leftmost = leftmost.left
        left = self.quantity(leftmost)
        for step in reversed(spine[1:]):
            try:
                left = self._binary(step, left)
            except UnitError as error:
                raise self.fail("U006" if error.operation == "power" else "U001", mismatch_message(error),
                                step.op_span) from None  # fmt: skip
            except OverflowError:
                raise self.fail("E002", "the result overflows float64 (beyond about 1.8e308)", step.span) from None
            self.spend(left, step.span)
        return self._binary(node, left)

    def _binary(self, node: ast.Binary, left: Quantity) -> Quantity:
        """``node`` with its left operand already evaluated to ``left``."""
        right = self.quantity(node.right)
        try:
            if node.op == "+":
                return left + right
            if node.op == "-":
                return left - right
            if node.op == "*":
                return left * right
            if node.op == "/":
                divisor = right.value
                if bool(numpy().any(divisor == 0)) if is_array(divisor) else divisor == 0:
                    raise self.fail("E001", "division by zero", node.right.span)
                return left / right
            return self._power(node, left, right)
        except ValueError:
            raise self.fail("E005", _length_message(left, right), node.op_span) from None

    def _power(self, node: ast.Binary, base: Quantity, exponent: Quantity) -> Quantity:
        if exponent.dim and not exponent.free:
            raise self.fail("U006", f"an exponent must have no unit, not {describe_unit(exponent)}", node.right.span)
        if is_array(exponent.value):
            if base.dim:
                raise self.fail("U006", "a quantity with a unit needs a single exponent, not a sweep", node.right.span)
            return Quantity(numpy().power(base.value, exponent.value), 0, base.free, None)
        power = float(exponent.value)
        if base.dim and (abs(power) > dimension.MAX_EXPONENT or not dimension.is_representable(base.dim * int(power))):
            raise self.fail("E003", f"a unit exponent beyond ±{dimension.MAX_EXPONENT}", node.right.span)
        if not is_array(base.value) and base.value < 0 and not power.is_integer():
            raise self.fail("E004", "a negative number to a fractional power", node.span)
        if power < 0 and (bool(numpy().any(base.value == 0)) if is_array(base.value) else base.value == 0):
            raise self.fail("E001", "division by zero: zero to a negative power", node.left.span)
        return base.power(power)

    def _eval_Call(self, node: ast.Call) -> Value:
        return self.call(self, node)

    def _eval_Field(self, node: ast.Field) -> Quantity:
        target = self.value(node.target)
        if isinstance(target, Record):
            fields = target.fields
            owner = f"'{target.name}'"
        elif isinstance(target, ShapeValue):
            fields = target.fields()
            owner = "a shape"
        else:
            raise self.fail("N003", f"a number has no field '{node.name}'", node.name_span)
        if node.name not in fields:
            if isinstance(target, Record) and (node.name in target.unknown or "" in target.unknown):
                what, why = (node.name, target.unknown[node.name]) if node.name in target.unknown else (
                    f"'{target.name}'", target.unknown[""])  # fmt: skip
                raise self.fail("T003", f"untested: {what} is not known: {why}", node.span)
            note = did_you_mean(node.name, fields)
            notes = (note,) if note else (f"fields: {', '.join(sorted(fields))}",)
            raise self.fail("N003", f"{owner} has no field '{node.name}'", node.name_span, notes)
        return fields[node.name]

    def _eval_Index(self, node: ast.Index) -> Record:
        target = self.value(node.target)
        slicer = target.slicer if isinstance(target, Record) else None
        if slicer is None:
            owner = f"'{target.name}'" if isinstance(target, Record) else "a number or shape"
            raise self.fail("H001", f'{owner} has no slices or axes to index with "{node.key}"', node.key_span)
        found = slicer(node.key)
        if isinstance(found, str):
            raise self.fail("H001", found, node.key_span)
        return found

    def _eval_ListExpr(self, node: ast.ListExpr) -> Quantity:
        if not node.items:
            raise self.fail("S001", "an empty list has no value", node.span)
        items = [self.quantity(item) for item in node.items]
        size = sum(item.value.size if is_array(item.value) else 1 for item in items)
        self.check_size(size, node.span)  # before anything is built: `[r, r, …]` of a large r
        first = items[0]
        dim, free = first.dim, first.free
        for item, expr in zip(items[1:], node.items[1:]):
            if item.dim != dim and not (item.free or free):
                raise self.fail(
                    "U001",
                    f"list items have different units: {describe_unit(first)} and {describe_unit(item)}",
                    expr.span,
                )
            if not item.free:
                dim, free = item.dim, False
        np = numpy()
        values = np.concatenate([np.ravel(np.asarray(item.value, dtype=np.float64)) for item in items])
        return self.array(values, dim, free, first.label, node.span)

    def check_size(self, size: float, span: Span) -> None:
        """Fail before a sweep of ``size`` elements is built if it is empty, too large, or beyond the budget."""
        limit = self.limits.max_array_elements
        if size > limit:
            raise self.fail("E003", f"a sweep of {size:,.0f} elements exceeds the limit of {limit:,}", span)
        if size < 1:
            raise self.fail("E004", "an empty sweep has no value", span)
        why = self.budget.room(int(size))
        if why is not None:
            raise self.fail("E003", why, span)

    def array(self, values: object, dim: int, free: bool, label: str | None, span: Span) -> Quantity:
        """Build a sweep value, within the element limit."""
        np = numpy()
        array = np.asarray(values, dtype=np.float64)
        self.check_size(array.size, span)
        return Quantity(array, dim, free, label)

    def _eval_Shape(self, node: ast.Shape) -> ShapeValue:
        dims = []
        for expr in node.dims:
            value = self.quantity(expr)
            if value.dim or is_array(value.value) or value.value < 0 or not float(value.value).is_integer():
                raise self.fail("U006", "a shape's dimensions must be non-negative whole numbers", expr.span)
            dims.append(float(value.value))
        return ShapeValue(node.dtype, tuple(dims))


#: Node class -> its ``_eval_`` method, filled on first use.
_DISPATCH: dict[type, Callable[[Evaluator, Any], Value]] = {}


def _is_finite(value: object) -> bool:
    if is_array(value):
        return bool(numpy().all(numpy().isfinite(value)))
    return math.isfinite(value)  # type: ignore[arg-type]


def _length_message(left: Quantity, right: Quantity) -> str:
    sizes = [left.value.size if is_array(left.value) else 1, right.value.size if is_array(right.value) else 1]
    return f"sweeps of different lengths ({sizes[0]} and {sizes[1]}) cannot be combined element by element"


__all__ = ["CallHandler", "Evaluator"]
