"""Constants written in the calc language: ``"197 TFLOP/s"``, ``"16 GiB"``, ``"1 byte/s"``.

Chip fields (``hardware/``) and formula parameter units (``formulas/call.py``)
are constants: a number with a unit, arithmetic allowed, but no names and no
calls.  They are read with the same lexer, parser and evaluator as a draft,
so the data doubles as a test of the language.
"""

from __future__ import annotations

from scaling_core.diagnostics import make_diagnostic
from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_claim_expression
from scaling_core.expr.values import EvaluationError, Value
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.quantity import Quantity
from scaling_core.units.registry import default_registry


def _no_names(_name: str) -> None:
    return None


def _no_calls(_evaluator: Evaluator, node: ast.Call) -> Value:
    raise EvaluationError(make_diagnostic("N004", f"a constant cannot call '{node.name}'", node.name_span))


def evaluate_constant(text: str) -> Quantity | None:
    """The quantity ``text`` stands for (``"197 TFLOP/s"``), or None if it is not a constant."""
    registry = default_registry()
    tokens, problems = tokenize(text)
    expr, _tolerance, problem = parse_claim_expression(tokens, registry.__contains__)
    if problems or problem or expr is None:
        return None
    evaluator = Evaluator(registry, _no_names, list, _no_calls)
    try:
        with quiet_arrays():
            return evaluator.quantity(expr)
    except EvaluationError:
        return None


__all__ = ["evaluate_constant"]
