"""The allow-listed built-in functions of the calc language.

Each entry: name -> (minimum args, maximum args or None, one-line doc, implementation).
Rounding functions act on the value in SI base units; use ``-> unit`` first
if you mean "round to whole days".  :mod:`scaling_core.prelude` puts them, and
the formula library after them, in the one table a draft can call.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import mismatch_message
from scaling_core.units import dimension
from scaling_core.units.arrays import is_array, numpy
from scaling_core.units.quantity import Magnitude, Quantity, UnitError, unify

Implementation = Callable[[Evaluator, ast.Call, list[Quantity]], Quantity]


def _elementwise(name: str, on_float: Callable[[float], float]) -> Implementation:
    """Apply NumPy's ufunc ``name`` to a sweep, or ``on_float`` to a float."""

    def apply(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
        (arg,) = args
        value = arg.value
        result = getattr(numpy(), name)(value) if is_array(value) else on_float(float(value))
        return Quantity(result, arg.dim, arg.free, arg.label)

    return apply


def _whole(round_float: Callable[[float], int]) -> Callable[[float], float]:
    """A float rounding (math.ceil, round, ...) that, like NumPy, leaves inf and nan as they are."""
    return lambda v: float(round_float(v)) if math.isfinite(v) else v


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf  # as numpy.exp; the evaluator reports the non-finite result (E002)


def _positive(value: Magnitude) -> bool:
    return bool(numpy().all(value > 0)) if is_array(value) else float(value) > 0


def _dimensionless(
    name: str, ufunc: str, on_float: Callable[[float], float], domain: Callable[[object], bool]
) -> Implementation:
    def apply(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
        (arg,) = args
        if arg.dim and not arg.free:
            raise ev.fail("U006", f"{name} needs a number without a unit", node.args[0].span)
        if not domain(arg.value):
            raise ev.fail("E004", f"{name} is undefined here (argument out of its domain)", node.args[0].span)
        value = arg.value
        return Quantity(getattr(numpy(), ufunc)(value) if is_array(value) else on_float(float(value)), 0, True, None)

    return apply


def _sqrt(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
    (arg,) = args
    if bool(numpy().any(arg.value < 0)) if is_array(arg.value) else arg.value < 0:
        raise ev.fail("E004", "square root of a negative number", node.args[0].span)
    root = dimension.root(arg.dim, 2)
    if root is None:
        raise ev.fail(
            "U006", f"the square root of {dimension.base_unit_name(arg.dim)} is not a unit", node.args[0].span
        )
    return Quantity(numpy().sqrt(arg.value) if is_array(arg.value) else math.sqrt(arg.value), root, arg.free, None)


def _extreme(name: str, pick: Callable[..., float]) -> Implementation:
    """``min``/``max``: NumPy's ``name`` over sweeps, ``pick`` over floats."""

    def apply(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
        if len(args) == 1:
            (arg,) = args
            value = float(getattr(numpy(), name)(arg.value)) if is_array(arg.value) else float(arg.value)
            return Quantity(value, arg.dim, arg.free, arg.label)
        dim, free = args[0].dim, args[0].free
        for arg, expr in zip(args[1:], node.args[1:]):
            try:
                dim, free = unify(Quantity(0.0, dim, free), arg, "compare")
            except UnitError as error:
                raise ev.fail("U001", mismatch_message(error), expr.span) from None
        if not any(is_array(a.value) for a in args):
            return Quantity(float(pick(float(a.value) for a in args)), dim, free, args[0].label)
        np = numpy()
        sizes = sorted({a.value.size for a in args if is_array(a.value)})
        if len(sizes) > 1:
            raise ev.fail("E005", f"{name} of sweeps of different lengths ({sizes[0]} and {sizes[-1]})", node.span)
        values = np.broadcast_arrays(*[np.asarray(a.value, dtype=np.float64) for a in args])
        result = getattr(np, name)(np.stack(values), axis=0)
        return Quantity(result, dim, free, args[0].label)

    return apply


def _sum(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
    (arg,) = args
    total = float(numpy().sum(arg.value)) if is_array(arg.value) else float(arg.value)
    return Quantity(total, arg.dim, arg.free, arg.label)


def _range(ev: Evaluator, node: ast.Call, args: list[Quantity]) -> Quantity:
    for arg, expr in zip(args, node.args):
        if is_array(arg.value):
            raise ev.fail("U006", "range takes single numbers", expr.span)
    start, stop = (args[0].value, args[1].value) if len(args) > 1 else (0.0, args[0].value)
    step = args[2].value if len(args) > 2 else 1.0
    if step == 0:
        raise ev.fail("E004", "range step must not be zero", node.args[2].span)
    count = max(math.ceil((stop - start) / step), 0)
    if count == 0:
        raise ev.fail("E004", "this range is empty: a sweep needs at least one element", node.span)
    ev.check_size(count, node.span)
    source = args[1] if len(args) > 1 else args[0]
    return ev.array(numpy().arange(count) * step + start, source.dim, source.free, source.label, node.span)


FUNCTIONS: dict[str, tuple[int, int | None, str, Implementation]] = {
    "ceil": (1, 1, "round up to a whole number (in SI base units)", _elementwise("ceil", _whole(math.ceil))),
    "floor": (1, 1, "round down to a whole number (in SI base units)", _elementwise("floor", _whole(math.floor))),
    "round": (1, 1, "round to the nearest whole number (in SI base units)", _elementwise("round", _whole(round))),
    "abs": (1, 1, "absolute value", _elementwise("abs", abs)),
    "sqrt": (1, 1, "square root; units must have even powers", _sqrt),
    "log2": (1, 1, "base-2 logarithm of a number", _dimensionless("log2", "log2", math.log2, _positive)),
    "log10": (1, 1, "base-10 logarithm of a number", _dimensionless("log10", "log10", math.log10, _positive)),
    "ln": (1, 1, "natural logarithm of a number", _dimensionless("ln", "log", math.log, _positive)),
    "exp": (1, 1, "e to the power of a number", _dimensionless("exp", "exp", _exp, lambda v: True)),
    "min": (1, None, "smallest argument (or smallest element of one sweep)", _extreme("min", min)),
    "max": (1, None, "largest argument (or largest element of one sweep)", _extreme("max", max)),
    "sum": (1, 1, "sum of a sweep's elements", _sum),
    "range": (1, 3, "sweep start, start+step, ... below stop: range(stop) or range(start, stop[, step])", _range),
}


def call_builtin(ev: Evaluator, node: ast.Call) -> Quantity:
    """Evaluate a call of the built-in function ``node.name`` (a key of :data:`FUNCTIONS`)."""
    minimum, maximum, _doc, implementation = FUNCTIONS[node.name]
    count = len(node.args)
    if count < minimum or (maximum is not None and count > maximum):
        expected = (
            str(minimum)
            if minimum == maximum
            else f"{minimum} or more"
            if maximum is None
            else f"{minimum} to {maximum}"
        )
        raise ev.fail("N005", f"{node.name} takes {expected} argument(s), got {count}", node.span)
    args = [ev.quantity(arg) for arg in node.args]
    return implementation(ev, node, args)
