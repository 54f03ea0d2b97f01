"""Everything a draft can call, as one call handler for the evaluator.

The evaluator (``expr/evaluator.py``) knows no function.  Whoever builds an
:class:`~scaling_core.expr.evaluator.Evaluator` for a draft hands it
:func:`call`, which looks the called name up in :data:`CALLABLES`:

1. the built-in functions (``expr/functions.py``: ``ceil``, ``sqrt``, ``max`` ...);
2. then the formula library (``formulas/``: ``allgather_time``, ``roofline_time`` ...);
3. then the calls answered by trusted code (``xla_calls.py``: ``xla_cost``,
   ``comm_bytes``), which need the analysis's
   :class:`~scaling_core.external.TrustedCode`: :func:`caller` binds it;
4. then the measurements (``measure_calls.py``: ``measure_matmul``,
   ``measure_copy``, ``measure_collective``, ``measure``), answered from the
   caller's :class:`~scaling_core.measured.MeasurementSource` (the measurement
   cache), which :func:`caller` binds too.

A built-in keeps its name if a later group has the same one.  A name in no
group is error N004, with a did-you-mean over every callable name.

How to add a function
---------------------
* A built-in (a pure function of numbers with units): add an entry to
  ``FUNCTIONS`` in ``expr/functions.py``; it joins this table by itself.
* A formula (a named calc-language expression with a source): add it to a
  module of ``formulas/`` (see ``formulas/model.py``); it joins by itself.
* Anything else (a new group, such as the JAX functions): write a handler
  ``def handler(ev: Evaluator, node: ast.Call) -> Value`` that evaluates the
  arguments with ``ev.value`` or ``ev.quantity``, reports a failure with
  ``raise ev.fail(code, message, span)`` and returns a value; then add
  ``name: handler`` entries to :data:`CALLABLES` below, after the groups it
  must not shadow.  Never add a call inside the evaluator itself.
  Completion and hover (``queries/assist.py``, ``queries/hover.py``) describe
  built-ins and formulas from their own tables: give a new group an entry there
  too, and document it in ``docs/syntax.md``.
"""

from __future__ import annotations

from functools import partial

from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import CallHandler, Evaluator
from scaling_core.expr.functions import FUNCTIONS, call_builtin
from scaling_core.expr.values import Value, did_you_mean
from scaling_core.external import KINDS, TrustedCode
from scaling_core.formulas import LIBRARY
from scaling_core.formulas.call import call_formula
from scaling_core.measure_calls import SIGNATURES as MEASURE_CALLS
from scaling_core.measure_calls import measure_call
from scaling_core.measured import MeasurementSource
from scaling_core.xla_calls import ask


def _table() -> dict[str, CallHandler]:
    """Built-ins first, then the formula library, then trusted code and measurements (earlier names win)."""
    table: dict[str, CallHandler] = {name: call_builtin for name in FUNCTIONS}
    for name, formula in LIBRARY.items():
        table.setdefault(name, partial(call_formula, formula=formula))
    for name in KINDS:
        table.setdefault(name, partial(ask, trusted=None))
    for name in MEASURE_CALLS:
        table.setdefault(name, partial(measure_call, source=None))
    return table


#: Every name a draft can call, with its handler.
CALLABLES: dict[str, CallHandler] = _table()


def call(ev: Evaluator, node: ast.Call) -> Value:
    """Evaluate a call in a draft: the handler of ``node.name``, or error N004 with a did-you-mean."""
    handler = CALLABLES.get(node.name)
    if handler is None:
        note = did_you_mean(node.name, CALLABLES)
        notes = (note,) if note else (f"functions: {', '.join(sorted(FUNCTIONS))}",)
        raise ev.fail("N004", f"unknown function '{node.name}'", node.name_span, notes)
    return handler(ev, node)


def caller(
    trusted: TrustedCode | None, measurements: MeasurementSource | None = None, path: str = "", text: str = ""
) -> CallHandler:
    """The call handler of an analysis of ``text`` at ``path`` with this trusted code and measurement cache.

    :func:`call` itself when it has neither.
    """
    if trusted is None and measurements is None:
        return call
    bound: dict[str, CallHandler] = {}
    if trusted is not None:
        bound.update({name: partial(ask, trusted=trusted) for name in KINDS
                      if getattr(CALLABLES.get(name), "func", None) is ask})  # fmt: skip
    if measurements is not None:
        bound.update({name: partial(measure_call, source=measurements, path=path, text=text) for name in MEASURE_CALLS
                      if getattr(CALLABLES.get(name), "func", None) is measure_call})  # fmt: skip

    def call_with_trusted_code(ev: Evaluator, node: ast.Call) -> Value:
        handler = bound.get(node.name)
        return handler(ev, node) if handler is not None else call(ev, node)

    return call_with_trusted_code


__all__ = ["CALLABLES", "call", "caller"]
