"""``xla_cost`` and ``comm_bytes``: calls answered by trusted code, not by the engine.

``xla_cost(f, bf16[B, D], bf16[D, F])`` asks what XLA makes of the function
``f`` of a ```` ```python calc ```` block at those argument shapes;
``comm_bytes(f, f32[N, D])`` asks what the collectives of its ``shard_map``
move.  The engine only checks the arguments and turns the
:class:`~scaling_core.external.Answer` of the caller's
:class:`~scaling_core.external.TrustedCode` into a record whose fields are
numbers with units (FLOP, bytes).  Whatever is not known (the block did not
run, JAX is missing, a custom call hides its cost, a loop's trip count is
dynamic) is an untested value with its reason (T003, information): a check
using it is skipped, never failed.  The author's code raising while it is
traced is an error in the draft (T002).

:mod:`scaling_core.prelude` routes these names here with the analysis's
trusted code (see :func:`scaling_core.prelude.caller`).
"""

from __future__ import annotations

from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import Record, ShapeValue, Value
from scaling_core.external import JAX_DTYPES, KINDS, Answer, Outcome, Question, ShapeArg, TrustedCode
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity

#: The kind of record a python calc block's function is bound to (see ``document/cells.py``).
FUNCTION_KIND = "python function"
_FLOP = dimension.pack({"computation": 1})
_BYTE = dimension.pack({"information": 1})
#: The unit of each answer field that is not in bytes.
_DIMS = {"flops": _FLOP, "dot_flops": _FLOP, "transcendentals": 0}
#: How each call is written (for messages, completion and signature help).
SIGNATURES = {
    "xla_cost": "xla_cost(f, bf16[B, D], bf16[D, F], ...)",
    "comm_bytes": "comm_bytes(f, f32[N, D], ...)",
}
#: One line per call, for completion and hover.
DOCS = {
    "xla_cost": "XLA's cost analysis of a python calc block's function at these argument shapes, lowered on "
    "the CPU: .flops, .dot_flops, .transcendentals, .bytes (arguments + outputs), .bytes_unfused.",
    "comm_bytes": "Bytes each device sends per collective of a python calc block's shard_map function "
    "(ring algorithms): .all_gather, .reduce_scatter, .all_reduce, .all_to_all, .ppermute, .total.",
}


def ask(ev: Evaluator, node: ast.Call, trusted: TrustedCode | None) -> Value:
    """Evaluate ``xla_cost(...)`` or ``comm_bytes(...)``: check the arguments, ask ``trusted``, make a record."""
    kind = node.name
    if not node.args:
        raise ev.fail("N005", f"{kind} takes a function and its argument shapes: {SIGNATURES[kind]}", node.span)
    function = ev.value(node.args[0])
    if not isinstance(function, Record) or function.kind != FUNCTION_KIND:
        message = f"{kind}: the first argument must be a function defined in a python calc block"
        raise ev.fail("U006", message, node.args[0].span)
    shapes = tuple(_shape(ev, kind, position, expr) for position, expr in enumerate(node.args[1:], start=2))
    why = function.unknown.get("call")
    if why:
        raise ev.fail("T003", f"untested: {kind}({function.name}, ...) is not known: {why}", node.span)
    if trusted is None:
        raise ev.fail("T003", f"untested: {kind} needs trusted code, and this caller runs none", node.span)
    question = Question(kind, function.sources.get("program", ""), function.name, shapes)
    try:
        answer = trusted.ask(question)
    except Exception as error:  # the caller's runner failing is reported, never raised
        answer = Answer(failure=(Outcome.NOT_RUN, f"the analysis process failed: {type(error).__name__}: {error}"))
    if answer.failure is not None:
        outcome, message = answer.failure
        if outcome == Outcome.ERROR:
            raise ev.fail("T002", f"{kind}: {function.name} raised {message}", node.span)
        raise ev.fail("T003", f"untested: {kind}({function.name}, ...) is not known: {message}", node.span)
    return _record(kind, function.name, answer)


def _shape(ev: Evaluator, kind: str, position: int, expr: ast.Expr) -> ShapeArg:
    value = ev.value(expr)
    if not isinstance(value, ShapeValue):
        message = f"{kind}: argument {position} must be a shape such as bf16[4096, 8192]"
        raise ev.fail("U006", message, expr.span)
    if value.dtype not in JAX_DTYPES:
        raise ev.fail("T003", f"untested: JAX has no dtype {value.dtype}", expr.span)
    return ShapeArg(JAX_DTYPES[value.dtype], tuple(int(d) for d in value.dims))


def _record(kind: str, function: str, answer: Answer) -> Record:
    fields = {
        name: Quantity(float(number), _DIMS.get(name, _BYTE), _DIMS.get(name, _BYTE) == 0)
        for name, number in answer.values.items()
        if name not in answer.unknown
    }
    unknown = dict(answer.unknown)
    for name in KINDS[kind]:
        if name not in fields and name not in unknown:
            unknown[name] = "the analysis process did not report it"
    shown = ", ".join(f"{name} unknown" for name in sorted(unknown))
    title = f"{kind}({function})" + (f": {shown}" if shown else "")
    return Record(f"{kind}({function})", title, fields, kind=kind, unknown=unknown)


__all__ = ["DOCS", "FUNCTION_KIND", "SIGNATURES", "ask"]
