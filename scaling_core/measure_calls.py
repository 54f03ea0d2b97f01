"""``measure_matmul``, ``measure_copy``, ``measure_collective``, ``measure``: timings read from the measurement cache.

A call names what to time, and optionally (as its last argument) the catalog
chip or slice it is about::

    t = measure_matmul(bf16[B, D], bf16[D, F], h100)
    t.median ≈ roofline_time(...) ± 20%

The engine never times anything: it turns the call into a
:class:`~scaling_core.measured.MeasureRequest` and asks the caller's
:class:`~scaling_core.measured.MeasurementSource` (the committed cache that
``margin measure`` fills).  The value is a record with the fields of
:data:`FIELDS`.  What the cache cannot vouch for is never a verdict:

* no measurement of this request on the device: the value is untested (T003,
  information) saying ``no measurement for <device>; run margin measure``;
* a measurement of this call for a different request (its sizes or its code
  changed since): warning T005, and the timing fields are unknown;
* a noisy measurement (CV above :data:`~scaling_core.measured.NOISY_CV`):
  warning T004, and the timing fields are unknown (``.cv`` and ``.samples``
  stay known).
"""

from __future__ import annotations

import math

from scaling_core.diagnostics import make_diagnostic
from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import Record, ShapeValue, Value
from scaling_core.external import JAX_DTYPES
from scaling_core.measured import NOISY_CV, Found, Measurement, MeasurementSource, MeasureRequest
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity
from scaling_core.xla_calls import FUNCTION_KIND

_SECOND = dimension.pack({"time": 1})
_BYTE = dimension.pack({"information": 1})
#: The collectives ``measure_collective`` knows, written as a word: ``measure_collective(all_gather, 64 MiB, 8)``.
COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "ppermute")
#: Record field -> (the cache's number, whether it is a time).
FIELDS: dict[str, tuple[str, bool]] = {
    "median": ("median_s", True), "time": ("median_s", True), "min": ("min_s", True), "p90": ("p90_s", True),
    "compile": ("compile_s", True), "cv": ("cv", False), "samples": ("n", False),
}  # fmt: skip
#: How each call is written (for messages, completion and signature help).
SIGNATURES = {
    "measure_matmul": "measure_matmul(bf16[B, D], bf16[D, F], chip?)",
    "measure_copy": "measure_copy(bytes, chip?)",
    "measure_collective": "measure_collective(all_gather | reduce_scatter | all_reduce | all_to_all | ppermute, "
    "bytes, axis_size, chip?)",
    "measure": "measure(f, bf16[B, D], ..., chip?)",
}
#: One line per call, for completion and hover.
DOCS = {
    "measure_matmul": "The measured time of x @ w on a device, from .margin/measurements.json (margin measure "
    "fills it): .median (.time), .min, .p90, .cv, .samples, .compile.",
    "measure_copy": "The measured time to read and write this many bytes (x * 2, in place) on a device.",
    "measure_collective": "The measured time of one collective over axis_size devices, bytes being each "
    "device's operand.",
    "measure": "The measured time of a python calc block's function at these argument shapes on a device.",
}
#: Kinds of record that name a device (the catalog's chips and their slices).
_DEVICE_KINDS = frozenset(("tpu", "gpu", "chip", "slice"))


def measure_call(
    ev: Evaluator, node: ast.Call, source: MeasurementSource | None, path: str = "", text: str = ""
) -> Value:
    """Evaluate a ``measure_*`` call: build its request, ask ``source``, make the record."""
    name = node.name
    args = list(node.args)
    device = ""
    if len(args) > _least(name):
        last = _device(ev, args[-1])
        if last is not None:
            device, args = last.name, args[:-1]
    spec = _spec(ev, node, args)
    if source is None:
        raise ev.fail("T003", f"untested: {name} reads the measurement cache, and this caller has none", node.span)
    call = text[node.span.start : node.span.end] if text else name
    request = MeasureRequest(spec, device, path, call, node.span)
    try:
        found = source.lookup(request)
    except Exception as error:  # the caller's cache failing is reported, never raised
        found = Measurement(Found.MISSING, device, about=f"the measurement cache failed: {error}")
    if found.found == Found.MISSING:
        why = found.about or "run margin measure"
        raise ev.fail("T003", f"untested: no measurement for {device or 'any device'}; {why}", node.span)
    if found.found == Found.AMBIGUOUS:
        message = f"untested: measured on several devices ({found.about}); name the chip as the last argument"
        raise ev.fail("T003", message, node.span)
    if found.found == Found.STALE:
        message = (f"stale measurement: {call} was measured on {found.device} for a different request "
                   f"({found.about}); run margin measure")  # fmt: skip
        ev.hints.append(make_diagnostic("T005", message, node.span))
        return _record(
            name, request, found, "the measurement is stale: the request changed since it was measured", "stale"
        )
    cv = found.values.get("cv", 0.0)
    if cv > NOISY_CV:
        samples = int(found.values.get("n", 0))
        message = (f"noisy measurement: CV {cv:.2f} > {NOISY_CV:g} over {samples} samples on {found.device}; "
                   "its times give no verdict (measure again on a quiet machine)")  # fmt: skip
        ev.hints.append(make_diagnostic("T004", message, node.span))
        return _record(name, request, found, f"noisy measurement (CV {cv:.2f} > {NOISY_CV:g})", "noisy")
    return _record(name, request, found, "", "found")


def _least(name: str) -> int:
    """The fewest arguments a call has before its optional device."""
    return {"measure_matmul": 2, "measure_copy": 1, "measure_collective": 3, "measure": 1}[name]


def _device(ev: Evaluator, expr: ast.Expr) -> Record | None:
    if isinstance(expr, ast.Name) and ev.lookup(expr.name) is None:
        return None  # an unknown name is reported where the argument is read
    value = ev.value(expr)
    return value if isinstance(value, Record) and value.kind in _DEVICE_KINDS else None


def _spec(ev: Evaluator, node: ast.Call, args: list[ast.Expr]) -> dict[str, object]:
    name = node.name
    if name == "measure_matmul":
        if len(args) != 2:
            raise ev.fail("N005", f"measure_matmul takes two shapes: {SIGNATURES[name]}", node.span)
        x, w = (_shape(ev, name, i + 1, arg) for i, arg in enumerate(args))
        if len(x[1]) != 2 or len(w[1]) != 2 or x[1][1] != w[1][0] or x[0] != w[0]:
            message = "measure_matmul: the shapes must be dtype[B, D] and the same dtype[D, F]"
            raise ev.fail("U006", message, node.span)
        return {"op": "matmul", "B": x[1][0], "D": x[1][1], "F": w[1][1], "dtype": x[0]}
    if name == "measure_copy":
        if len(args) != 1:
            raise ev.fail("N005", f"measure_copy takes a size: {SIGNATURES[name]}", node.span)
        return {"op": "copy", "bytes": _bytes(ev, name, args[0])}
    if name == "measure_collective":
        if len(args) != 3:
            raise ev.fail("N005", f"measure_collective takes three arguments: {SIGNATURES[name]}", node.span)
        kind = args[0]
        if not isinstance(kind, ast.Name) or kind.name not in COLLECTIVES:
            message = f"measure_collective: the first argument is the collective, one of {', '.join(COLLECTIVES)}"
            raise ev.fail("U006", message, kind.span)
        size = _whole(ev, name, args[2], "the axis size")
        if size < 2:
            raise ev.fail("U006", "measure_collective: the axis size must be at least 2 devices", args[2].span)
        return {"op": "collective", "kind": kind.name, "bytes": _bytes(ev, name, args[1]), "axis_size": size}
    return _function_spec(ev, node, args)


def _function_spec(ev: Evaluator, node: ast.Call, args: list[ast.Expr]) -> dict[str, object]:
    if not args:
        raise ev.fail("N005", f"measure takes a function and its argument shapes: {SIGNATURES['measure']}", node.span)
    function = ev.value(args[0])
    if not isinstance(function, Record) or function.kind != FUNCTION_KIND:
        raise ev.fail("U006", "measure: the first argument must be a function of a python calc block", args[0].span)
    shapes = [_shape(ev, "measure", i + 2, arg) for i, arg in enumerate(args[1:])]
    return {"op": "function", "program": function.sources.get("program", ""), "function": function.name,
            "args": [[dtype, list(dims)] for dtype, dims in shapes]}  # fmt: skip


def _shape(ev: Evaluator, name: str, position: int, expr: ast.Expr) -> tuple[str, list[int]]:
    value = ev.value(expr)
    if not isinstance(value, ShapeValue):
        raise ev.fail("U006", f"{name}: argument {position} must be a shape such as bf16[4096, 8192]", expr.span)
    if value.dtype not in JAX_DTYPES:
        raise ev.fail("T003", f"untested: JAX has no dtype {value.dtype}", expr.span)
    dims = []
    for dim in value.dims:
        if not (isinstance(dim, int | float) and math.isfinite(dim) and dim == int(dim) and dim >= 0):
            raise ev.fail("T003", f"untested: {name} measures whole sizes, one at a time (not sweeps)", expr.span)
        dims.append(int(dim))
    return JAX_DTYPES[value.dtype], dims


def _number(ev: Evaluator, name: str, expr: ast.Expr) -> Quantity:
    value = ev.quantity(expr)
    if not isinstance(value.value, int | float):
        raise ev.fail("T003", f"untested: {name} measures one size at a time (not sweeps)", expr.span)
    return value


def _bytes(ev: Evaluator, name: str, expr: ast.Expr) -> int:
    value = _number(ev, name, expr)
    if value.dim not in (_BYTE, 0) or not math.isfinite(value.value) or value.value < 1:
        raise ev.fail("U006", f"{name}: the size must be a number of bytes, such as 64 MiB", expr.span)
    return int(round(value.value))


def _whole(ev: Evaluator, name: str, expr: ast.Expr, what: str) -> int:
    value = _number(ev, name, expr)
    if value.dim != 0 or not math.isfinite(value.value) or value.value != int(value.value):
        raise ev.fail("U006", f"{name}: {what} must be a whole number", expr.span)
    return int(value.value)


def _record(name: str, request: MeasureRequest, found: Measurement, unknown_why: str, status: str) -> Record:
    fields: dict[str, Quantity] = {}
    unknown: dict[str, str] = {}
    for field, (number, is_time) in FIELDS.items():
        if unknown_why and (is_time or number not in found.values):
            unknown[field] = unknown_why
        elif number not in found.values:
            unknown[field] = "the measurement cache does not have it"
        else:
            fields[field] = Quantity(float(found.values[number]), _SECOND if is_time else 0, not is_time)
    median = found.values.get("median_s")
    shown = f": median {median * 1e3:.4g} ms" if median is not None else ""
    title = f"{name} on {found.device}{shown} ({found.about})" if found.about else f"{name} on {found.device}{shown}"
    # Besides "measured", what hover shows (queries/measured.py): no key is a field's name, so a field's source stays "".
    sources = {**found.details, "measured": found.about, "call": request.call, "request": request.key,
               "device": found.device, "status": status}  # fmt: skip
    return Record(f"{name}(...)", title, fields, sources, kind="measurement", unknown=unknown)


__all__ = ["COLLECTIVES", "DOCS", "FIELDS", "SIGNATURES", "measure_call"]
