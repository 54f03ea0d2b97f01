"""Calling a library formula from the calc language, with argument checks and a trace.

:mod:`scaling_core.prelude` routes a call of a library name here.  Each
argument is checked against its parameter's unit (a calc-language constant,
read by :func:`~scaling_core.expr.constant.evaluate_constant`); the body is
evaluated by a child evaluator that sees only the bound parameters.
"""

from __future__ import annotations

from functools import lru_cache

from scaling_core.diagnostics import make_diagnostic
from scaling_core.expr import syntax as ast
from scaling_core.expr.constant import evaluate_constant
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import EvaluationError, Record, Value, describe_unit
from scaling_core.formulas.model import Formula, parse_body
from scaling_core.records import record
from scaling_core.text import Span
from scaling_core.units.quantity import Quantity


@record
class FormulaCall:
    """One evaluated call, kept for derivations: arguments as bound, and the result."""

    formula: Formula
    node: ast.Call
    arguments: dict[str, Value]
    #: Parameters that took their default value.
    defaulted: tuple[str, ...]
    result: Value


@lru_cache(maxsize=None)
def expected_dim(unit: str) -> int | None:
    """The dimension a parameter's unit text stands for (None for counts and chips)."""
    if unit in ("", "chip", "axis"):
        return None
    quantity = evaluate_constant(unit if unit.startswith("1") else f"1 {unit}")
    if quantity is None:
        raise ValueError(f"bad parameter unit {unit!r}")
    return quantity.dim


def call_formula(ev: Evaluator, node: ast.Call, formula: Formula) -> Value:
    """Evaluate ``formula`` at ``node``; every failure is reported at the call."""
    if not formula.required <= len(node.args) <= len(formula.params):
        counts = (
            f"{formula.required} to {len(formula.params)}"
            if formula.required < len(formula.params)
            else str(formula.required)
        )
        raise ev.fail(
            "N005", f"{formula.name} takes {counts} argument(s), got {len(node.args)}: {formula.signature}", node.span
        )
    bound: dict[str, Value] = {}
    defaulted = []
    for position, param in enumerate(formula.params):
        if position < len(node.args):
            value = ev.value(node.args[position])
            span = node.args[position].span
        else:
            value = _body_value(ev, node, formula, parse_body(param.default or ""), bound)
            span = node.span
            defaulted.append(param.name)
        bound[param.name] = _checked(ev, formula, param.name, param.unit, value, span)
    result = _body_value(ev, node, formula, formula.tree(), bound)
    if isinstance(result, Quantity):
        result = Quantity(result.value, result.dim, result.free, None)  # argument labels do not carry over
    if ev.trace is not None:
        ev.trace.append(FormulaCall(formula, node, bound, tuple(defaulted), result))
    return result


def _checked(ev: Evaluator, formula: Formula, name: str, unit: str, value: Value, span: Span) -> Value:
    where = f"{formula.name}: argument {name}"
    if unit == "chip":
        if not isinstance(value, Record):
            raise ev.fail("U006", f"{where} must be a chip such as tpu_v5e or h100", span)
        return value
    if unit == "axis":
        if not isinstance(value, Record) or value.kind != "axis":
            raise ev.fail("U006", f'{where} must be an axis of a slice such as tpu_v5p["4x4x4"]["x"]', span)
        return value
    if not isinstance(value, Quantity):
        raise ev.fail("U006", f"{where} must be a number, not a record or shape", span)
    dim = expected_dim(unit)
    if dim is None:
        if value.dim and not value.free:
            raise ev.fail("U001", f"{where} must be a plain number or count, not {describe_unit(value)}", span)
        return value
    if value.dim == dim:
        return value
    if value.free:
        return value.with_dim(dim)
    raise ev.fail("U001", f"{where} must be in {unit}, not {describe_unit(value)}", span)


def _body_value(ev: Evaluator, node: ast.Call, formula: Formula, body: ast.Expr, bound: dict[str, Value]) -> Value:
    child = ev.child(bound.get)
    try:
        return child.value(body)
    except EvaluationError as failure:
        inner = failure.diagnostic
        raise EvaluationError(make_diagnostic(inner.code, f"in {formula.name}: {inner.message}", node.span)) from None


__all__ = ["FormulaCall", "call_formula", "expected_dim"]
