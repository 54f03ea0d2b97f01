"""The allow-listed built-in functions of the calc language.

Each entry: name -> (minimum args, maximum args or None, one-line doc, implementation).
Rounding functions act on the value in SI base units; use ``-> unit`` first
if you mean "round to whole days".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from scaling_core.expr import syntax as ast
from scaling_core.formulas import LIBRARY
from scaling_core.formulas.call import call_formula
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity, UnitError, unify

if TYPE_CHECKING:
    from scaling_core.expr.evaluator import Evaluator, Value

Implementation = Callable[["Evaluator", ast.Call, list[Quantity]], Quantity]


def _elementwise(function: Callable[[object], object]) -> Implementation:
    def apply(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
        (arg,) = args
        return Quantity(function(arg.value), arg.dim, arg.free, arg.label)

    return apply


def _dimensionless(name: str, function: Callable[[object], object], domain: Callable[[object], bool]) -> Implementation:
    def apply(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
        (arg,) = args
        if arg.dim and not arg.free:
            raise ev.fail("U006", f"{name} needs a number without a unit", node.args[0].span)
        if not domain(arg.value):
            raise ev.fail("E004", f"{name} is undefined here (argument out of its domain)", node.args[0].span)
        return Quantity(function(arg.value), 0, True, None)

    return apply


def _sqrt(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
    (arg,) = args
    if np.any(np.asarray(arg.value) < 0):
        raise ev.fail("E004", "square root of a negative number", node.args[0].span)
    root = dimension.root(arg.dim, 2)
    if root is None:
        raise ev.fail("U006", f"the square root of {dimension.base_unit_name(arg.dim)} is not a unit", node.args[0].span)
    return Quantity(np.sqrt(arg.value) if isinstance(arg.value, np.ndarray) else math.sqrt(arg.value), root, arg.free, None)


def _extreme(pick: Callable[..., object]) -> Implementation:
    def apply(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
        if len(args) == 1:
            (arg,) = args
            return Quantity(float(pick(np.atleast_1d(arg.value))), arg.dim, arg.free, arg.label)
        dim, free = args[0].dim, args[0].free
        for arg, expr in zip(args[1:], node.args[1:]):
            try:
                dim, free = unify(Quantity(0.0, dim, free), arg, "compare")
            except UnitError as error:
                from scaling_core.expr.evaluator import mismatch_message

                raise ev.fail("U001", mismatch_message(error), expr.span) from None
        values = np.broadcast_arrays(*[np.asarray(a.value, dtype=np.float64) for a in args])
        result = pick(np.stack(values), axis=0)
        return Quantity(float(result) if np.ndim(result) == 0 else result, dim, free, args[0].label)

    return apply


def _sum(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
    (arg,) = args
    return Quantity(float(np.sum(arg.value)), arg.dim, arg.free, arg.label)


def _range(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
    for arg, expr in zip(args, node.args):
        if isinstance(arg.value, np.ndarray):
            raise ev.fail("U006", "range takes single numbers", expr.span)
    start, stop = (args[0].value, args[1].value) if len(args) > 1 else (0.0, args[0].value)
    step = args[2].value if len(args) > 2 else 1.0
    if step == 0:
        raise ev.fail("E004", "range step must not be zero", node.args[2].span)
    count = max(math.ceil((stop - start) / step), 0)
    if count > ev.limits.max_array_elements:
        raise ev.fail("E003", f"a sweep of {count:,.0f} elements exceeds the limit of {ev.limits.max_array_elements:,}", node.span)
    source = args[1] if len(args) > 1 else args[0]
    return ev.array(np.arange(count) * step + start, source.dim, source.free, source.label, node.span)


FUNCTIONS: dict[str, tuple[int, int | None, str, Implementation]] = {
    "ceil": (1, 1, "round up to a whole number (in SI base units)", _elementwise(np.ceil)),
    "floor": (1, 1, "round down to a whole number (in SI base units)", _elementwise(np.floor)),
    "round": (1, 1, "round to the nearest whole number (in SI base units)", _elementwise(np.round)),
    "abs": (1, 1, "absolute value", _elementwise(np.abs)),
    "sqrt": (1, 1, "square root; units must have even powers", _sqrt),
    "log2": (1, 1, "base-2 logarithm of a number", _dimensionless("log2", np.log2, lambda v: bool(np.all(np.asarray(v) > 0)))),
    "log10": (1, 1, "base-10 logarithm of a number", _dimensionless("log10", np.log10, lambda v: bool(np.all(np.asarray(v) > 0)))),
    "ln": (1, 1, "natural logarithm of a number", _dimensionless("ln", np.log, lambda v: bool(np.all(np.asarray(v) > 0)))),
    "exp": (1, 1, "e to the power of a number", _dimensionless("exp", np.exp, lambda v: True)),
    "min": (1, None, "smallest argument (or smallest element of one sweep)", _extreme(np.min)),
    "max": (1, None, "largest argument (or largest element of one sweep)", _extreme(np.max)),
    "sum": (1, 1, "sum of a sweep's elements", _sum),
    "range": (1, 3, "sweep start, start+step, ... below stop: range(stop) or range(start, stop[, step])", _range),
}


def call_builtin(ev: Evaluator, node: ast.Call) -> Value:
    """Evaluate a call of an allow-listed function."""
    entry = FUNCTIONS.get(node.name)
    if entry is None and node.name in LIBRARY:
        return call_formula(ev, node, LIBRARY[node.name])
    if entry is None:
        from scaling_core.expr.evaluator import _did_you_mean

        suggestion = _did_you_mean(node.name, [*FUNCTIONS, *LIBRARY])
        notes = (f"did you mean {suggestion}?",) if suggestion else (f"functions: {', '.join(sorted(FUNCTIONS))}",)
        raise ev.fail("N004", f"unknown function '{node.name}'", node.name_span, notes)
    minimum, maximum, _doc, implementation = entry
    count = len(node.args)
    if count < minimum or (maximum is not None and count > maximum):
        expected = str(minimum) if minimum == maximum else f"{minimum} or more" if maximum is None else f"{minimum} to {maximum}"
        raise ev.fail("N005", f"{node.name} takes {expected} argument(s), got {count}", node.span)
    args = [ev.quantity(arg) for arg in node.args]
    return implementation(ev, node, args)
