"""``xla_cost`` and ``comm_bytes``: calls answered by trusted code, not by the engine.

``xla_cost(f, bf16[B, D], bf16[D, F])`` asks what XLA makes of the function
``f`` of a ```` ```python calc ```` block at those argument shapes; with a
catalog TPU chip or slice last (``xla_cost(f, ..., tpu_v5e["2x2"])``) it is
also compiled for that TPU topology (``.compiled_flops``, ``.compiled_bytes``,
``.xla_seconds``: :data:`TPU_TARGETS` names libtpu's topology);
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

import re

from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import Record, ShapeValue, Value
from scaling_core.external import JAX_DTYPES, KINDS, TPU_FIELDS, Answer, Outcome, Question, ShapeArg, TrustedCode
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity

#: The kind of record a python calc block's function is bound to (see ``document/cells.py``).
FUNCTION_KIND = "python function"
_FLOP = dimension.pack({"computation": 1})
_BYTE = dimension.pack({"information": 1})
#: The unit of each answer field that is not in bytes.
_DIMS = {
    "flops": _FLOP, "dot_flops": _FLOP, "transcendentals": 0, "compiled_flops": _FLOP,
    "xla_seconds": dimension.pack({"time": 1}),
}  # fmt: skip
#: The catalog TPUs ``xla_cost`` compiles for: libtpu's name of the generation, and the topology of a bare chip.
TPU_TARGETS = {
    "tpu_v4": ("v4", "2x2x1"),
    "tpu_v5p": ("v5", "2x2x1"),
    "tpu_v5e": ("v5e", "1x1"),
    "tpu_v6e": ("v6e", "1x1"),
}
#: Catalog TPUs it does not compile for, and why.
NOT_TARGETS = {
    "tpu7x": "JAX sees each TPU7x chip as two devices, so XLA's estimate for one device is not a chip's",
}
_SLICE = re.compile(r'(\w+)\["([0-9x]+)"\]')
#: How each call is written (for messages, completion and signature help).
SIGNATURES = {
    "xla_cost": "xla_cost(f, bf16[B, D], bf16[D, F], ..., tpu?)",
    "comm_bytes": "comm_bytes(f, f32[N, D], ...)",
}
#: One line per call, for completion and hover.
DOCS = {
    "xla_cost": "XLA's cost analysis of a python calc block's function at these argument shapes, lowered on "
    "the CPU: .flops, .dot_flops, .transcendentals, .bytes (arguments + outputs), .bytes_unfused; with a TPU "
    "chip or slice last (margin[tpu-aot]), compiled for it: .compiled_flops, .compiled_bytes, .xla_seconds.",
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
    exprs = list(node.args[1:])
    values = [ev.value(expr) for expr in exprs]
    target, tpu_why = "", ""
    if kind == "xla_cost" and values and isinstance(values[-1], Record):
        target, tpu_why = _target(ev, values[-1], exprs[-1])
        exprs, values = exprs[:-1], values[:-1]
    shapes = tuple(
        _shape(ev, kind, position, expr, value) for position, (expr, value) in enumerate(zip(exprs, values), start=2)
    )
    why = function.unknown.get("call")
    if why:
        raise ev.fail("T003", f"untested: {kind}({function.name}, ...) is not known: {why}", node.span)
    if trusted is None:
        raise ev.fail("T003", f"untested: {kind} needs trusted code, and this caller runs none", node.span)
    question = Question(kind, function.sources.get("program", ""), function.name, shapes, target)
    try:
        answer = trusted.ask(question)
    except Exception as error:  # the caller's runner failing is reported, never raised
        answer = Answer(failure=(Outcome.NOT_RUN, f"the analysis process failed: {type(error).__name__}: {error}"))
    if answer.failure is not None:
        outcome, message = answer.failure
        if outcome == Outcome.ERROR:
            raise ev.fail("T002", f"{kind}: {function.name} raised {message}", node.span)
        raise ev.fail("T003", f"untested: {kind}({function.name}, ...) is not known: {message}", node.span)
    if tpu_why:
        answer = Answer(answer.values, {**answer.unknown, **dict.fromkeys(TPU_FIELDS, tpu_why)})
    return _record(kind, function.name, answer, target, bool(target or tpu_why))


def _target(ev: Evaluator, record: Record, expr: ast.Expr) -> tuple[str, str]:
    """The libtpu topology a TPU chip or slice names (``tpu_v5e["2x2"]`` -> ``"v5e:2x2"``), or why it has none."""
    sliced = _SLICE.fullmatch(record.name) if record.kind == "slice" else None
    name = sliced.group(1) if sliced else record.name
    if sliced and name not in TPU_TARGETS and name not in NOT_TARGETS:
        chip = ev.lookup(name)  # a GPU's slice, or a TPU of the project's own catalog
        is_tpu = isinstance(chip, Record) and chip.kind == "tpu"
    else:
        is_tpu = bool(sliced) or record.kind == "tpu"
    if not is_tpu:
        message = (f"xla_cost: the last argument may be a TPU chip or slice to compile for, such as "
                   f'tpu_v5e or tpu_v5e["2x2"]; {record.name} is not one')  # fmt: skip
        raise ev.fail("U006", message, expr.span)
    if name in TPU_TARGETS:
        generation, shape = TPU_TARGETS[name]
        return f"{generation}:{sliced.group(2) if sliced else shape}", ""
    if name in NOT_TARGETS:
        return "", f"xla_cost does not compile for {name}: {NOT_TARGETS[name]}"
    return "", f"xla_cost compiles for {', '.join(sorted(TPU_TARGETS))}; {name} is not one of them"


def _shape(ev: Evaluator, kind: str, position: int, expr: ast.Expr, value: Value) -> ShapeArg:
    if not isinstance(value, ShapeValue):
        message = f"{kind}: argument {position} must be a shape such as bf16[4096, 8192]"
        raise ev.fail("U006", message, expr.span)
    if value.dtype not in JAX_DTYPES:
        raise ev.fail("T003", f"untested: JAX has no dtype {value.dtype}", expr.span)
    return ShapeArg(JAX_DTYPES[value.dtype], tuple(int(d) for d in value.dims))


def _record(kind: str, function: str, answer: Answer, target: str, tpu: bool) -> Record:
    fields = {
        name: Quantity(float(number), _DIMS.get(name, _BYTE), _DIMS.get(name, _BYTE) == 0)
        for name, number in answer.values.items()
        if name not in answer.unknown
    }
    unknown = dict(answer.unknown)
    for name in KINDS[kind] + (TPU_FIELDS if tpu else ()):
        if name not in fields and name not in unknown:
            unknown[name] = "the analysis process did not report it"
    shown = ", ".join(f"{name} unknown" for name in sorted(unknown))
    title = f"{kind}({function})" + (f" compiled for TPU {target}" if target else "") + (f": {shown}" if shown else "")
    return Record(f"{kind}({function})", title, fields, kind=kind, unknown=unknown)


__all__ = ["DOCS", "FUNCTION_KIND", "SIGNATURES", "ask"]
