"""XLA's numbers for one function at given shapes: ``xla_cost`` (runs in the analysis process, imports JAX).

The function is traced and lowered for the CPU backend with
:class:`jax.ShapeDtypeStruct` arguments, so nothing is allocated, and the
lowered module's cost analysis is read (``../shared/reference/jax-notes.md``
§1: lowered numbers are the textbook ones; compiled ones are one backend's
fusion decisions).  Fields:

``flops``, ``transcendentals``
    XLA's lowered cost analysis, with each static ``scan``/``fori_loop`` body
    counted as many times as the loop runs (XLA counts it once).
``bytes_unfused``
    lowered ``bytes accessed``: every op's operands and outputs, as if nothing
    were fused (an upper bound), loop-corrected the same way (approximately:
    a loop body's carry counts as fresh reads).
``dot_flops``
    2 × multiply-adds of every ``dot_general`` and convolution in the jaxpr
    (loops multiplied out; a ``shard_map`` body counts once per device).
``bytes``
    the arguments' and results' sizes: the fused ideal an author writes as
    ``2(BD + DF + BF)``.  Always known.

A custom call (LAPACK, Pallas, cuDNN), a ``while_loop`` with a dynamic trip
count or a ``cond`` makes every field but ``bytes`` unknown, with the reason.
Collectives are ``comm.py``'s; both walk jaxprs with :class:`Walk`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import jax as _jax
import jax.numpy as _jnp
from jax.extend import core as _jcore

# JAX's annotations differ across the supported versions (0.6.2 to 0.10): used untyped here.
jax: Any = _jax
jnp: Any = _jnp
jcore: Any = _jcore


#: Custom calls that are bookkeeping, not computation.
_BENIGN_CUSTOM_CALLS = frozenset(("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"))
_CUSTOM_CALL = re.compile(r"custom_call\s*@([\w.$-]+)")
#: The fields a custom call or a dynamic loop leaves unknown.
COMPUTED = ("flops", "transcendentals", "bytes_unfused", "dot_flops")


class Unsupported(Exception):
    """A question this JAX cannot answer (the message says why); not the author's error."""


def answer(
    kind: str, function: Any, args: list[tuple[str, list[int]]], target: str = ""
) -> tuple[dict[str, float], dict[str, str]]:
    """Values and unknown fields (field -> reason) for one question; ``target``: a TPU topology to compile for."""
    structs = shape_structs(args)
    if kind == "xla_cost":
        values, unknown = xla_cost(function, structs)
        if target:  # after the CPU lowering, so that the author's own errors are reported as such
            from server.analysis.tpu_aot import compiled_cost

            tpu_values, tpu_unknown = compiled_cost(function, structs, target)
            values, unknown = {**values, **tpu_values}, {**unknown, **tpu_unknown}
        return values, unknown
    if kind == "comm_bytes":
        from server.analysis.comm import comm_bytes

        return comm_bytes(function, structs)
    raise Unsupported(f"the analysis process does not know the question {kind!r}")


def shape_structs(args: list[tuple[str, list[int]]]) -> list[Any]:
    """One :class:`jax.ShapeDtypeStruct` per argument (nothing allocated)."""
    structs = []
    for name, dims in args:
        try:
            dtype = jnp.dtype(name)
        except TypeError:
            raise Unsupported(f"this JAX has no dtype {name}") from None
        if dtype.itemsize == 8 and not jax.config.read("jax_enable_x64"):
            raise Unsupported(f"{name} needs jax.config.update('jax_enable_x64', True) in a python calc block")
        structs.append(jax.ShapeDtypeStruct(tuple(dims), dtype))
    return structs


def nbytes(aval: Any) -> float:
    """The size of an abstract array in bytes (int4 counts half a byte)."""
    dtype = jnp.dtype(aval.dtype)
    if dtype == jnp.bool_:
        bits = 8
    elif jnp.issubdtype(dtype, jnp.integer):
        bits = jnp.iinfo(dtype).bits
    elif jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.complexfloating):
        bits = dtype.itemsize * 8 if jnp.issubdtype(dtype, jnp.complexfloating) else jnp.finfo(dtype).bits
    else:
        bits = dtype.itemsize * 8
    return float(math.prod(aval.shape) * bits / 8)


def lowered_cost(function: Any, structs: list[Any]) -> tuple[dict[str, float], list[str]]:
    """The lowered cost analysis (zero keys filled in) and the custom calls the module makes."""
    lowered = jax.jit(function).lower(*structs)
    raw = lowered.cost_analysis()
    raw = raw[0] if isinstance(raw, list) else raw  # jax < 0.4.36 returned a list
    raw = dict(raw or {})
    customs = sorted(set(_CUSTOM_CALL.findall(lowered.as_text())) - _BENIGN_CUSTOM_CALLS)
    negative = sorted(key for key, value in raw.items() if isinstance(value, int | float) and value < 0)
    if negative and not customs:
        customs = [f"a negative cost ({', '.join(negative)}), XLA's sign of a custom call"]
    cost = {key: float(raw.get(key, 0.0)) for key in ("flops", "transcendentals", "bytes accessed")}
    return cost, customs


def xla_cost(function: Any, structs: list[Any]) -> tuple[dict[str, float], dict[str, str]]:
    """The ``xla_cost`` record's fields for ``function`` at ``structs``."""
    closed = jax.make_jaxpr(function)(*structs)
    total_bytes = sum(nbytes(a) for a in closed.in_avals) + sum(nbytes(a) for a in closed.out_avals)
    cost, customs = lowered_cost(function, structs)
    walk = LoopCost()
    walk.jaxpr(closed.jaxpr, 1.0)
    values = {
        "flops": cost["flops"] + walk.extra["flops"],
        "transcendentals": cost["transcendentals"] + walk.extra["transcendentals"],
        "bytes_unfused": cost["bytes accessed"] + walk.extra["bytes accessed"],
        "dot_flops": walk.dot_flops,
        "bytes": total_bytes,
    }
    reasons = [f"a custom call ({', '.join(customs)}) hides its cost from XLA's cost analysis"] if customs else []
    reasons += walk.blockers
    unknown = {name: reasons[0] for name in COMPUTED} if reasons else {}
    return values, unknown


# -- walking a jaxpr ---------------------------------------------------------------
# A Walk visits every equation of a jaxpr and of the jaxprs nested in its parameters
# (pjit, custom_jvp_call, remat ...), knowing how many times each runs: a static scan
# (fori_loop with static bounds lowers to one) multiplies its body by its length.  What
# cannot be counted statically, a while_loop or a cond, goes to Walk.blockers with the
# reason, so the numbers depending on it are reported unknown.
WHILE = "a while_loop, whose trip count is known only at run time"
COND = "a lax.cond, whose branch is known only at run time"


def sub_jaxprs(params: dict[str, Any]) -> Iterator[Any]:
    """The (open) jaxprs among an equation's parameters."""
    for value in params.values():
        yield from _jaxprs_in(value)


def _jaxprs_in(value: Any) -> Iterator[Any]:
    if isinstance(value, jcore.ClosedJaxpr):
        yield value.jaxpr
    elif isinstance(value, jcore.Jaxpr):
        yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _jaxprs_in(item)


class Walk:
    """Visits equations with how many times each runs; subclasses count what they need in :meth:`leaf`."""

    def __init__(self) -> None:
        #: Why a count is not known (empty: everything was counted).
        self.blockers: list[str] = []

    def jaxpr(self, jaxpr: Any, times: float) -> None:
        """Visit every equation of ``jaxpr``, which runs ``times`` times."""
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if name == "scan":
                self.scan(eqn, times)
            elif name == "while":
                self.block(WHILE)
            elif name == "cond":
                self.block(COND)
            elif name == "shard_map":
                self.shard_map(eqn, times)
            else:
                self.leaf(eqn, times)
                for sub in sub_jaxprs(eqn.params):
                    self.jaxpr(sub, times)

    def block(self, reason: str) -> None:
        """Record that something is not countable (once per reason)."""
        if reason not in self.blockers:
            self.blockers.append(reason)

    def scan(self, eqn: Any, times: float) -> None:
        """A static loop: its body runs ``length`` times per run of the loop."""
        for sub in sub_jaxprs(eqn.params):
            self.jaxpr(sub, times * float(eqn.params["length"]))

    def shard_map(self, eqn: Any, times: float) -> None:
        """A ``shard_map``: by default its body counts once per device of the mesh."""
        for sub in sub_jaxprs(eqn.params):
            self.jaxpr(sub, times * float(eqn.params["mesh"].size))

    def leaf(self, eqn: Any, times: float) -> None:
        """An equation with no loop semantics (its nested jaxprs are visited after it)."""


class LoopCost(Walk):
    """Dot FLOPs from the jaxpr, and what XLA's count of each static loop's body misses."""

    def __init__(self) -> None:
        super().__init__()
        self.dot_flops = 0.0
        self.extra = {"flops": 0.0, "transcendentals": 0.0, "bytes accessed": 0.0}

    def scan(self, eqn: Any, times: float) -> None:
        """A static loop: XLA counts its body once; add the other ``length - 1`` times."""
        length = float(eqn.params["length"])
        body = eqn.params["jaxpr"]
        if length > 1:
            try:
                cost, customs = lowered_cost(jcore.jaxpr_as_fun(body), [_struct(a) for a in body.in_avals])
            except Exception as error:  # a body that cannot be lowered alone (a collective over a mesh axis)
                self.block(f"a loop body could not be costed alone ({type(error).__name__})")
                return
            if customs:
                self.block(f"a custom call ({', '.join(customs)}) in a loop body hides its cost")
            for key in self.extra:
                self.extra[key] += times * (length - 1) * cost[key]
        super().scan(eqn, times)  # the body's dots, and its own loops' corrections, run ``length`` times

    def leaf(self, eqn: Any, times: float) -> None:
        """Count a dot or a convolution."""
        name = eqn.primitive.name
        if name == "dot_general":
            (lhs_contracting, _rhs_contracting), _batch = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval
            depth = math.prod(lhs.shape[d] for d in lhs_contracting)
            self.dot_flops += times * 2 * math.prod(eqn.outvars[0].aval.shape) * depth
        elif name == "conv_general_dilated":
            rhs = eqn.invars[1].aval
            out_features = rhs.shape[eqn.params["dimension_numbers"].rhs_spec[0]]
            per_output = math.prod(rhs.shape) / max(out_features, 1)
            self.dot_flops += times * 2 * math.prod(eqn.outvars[0].aval.shape) * per_output


def _struct(aval: Any) -> Any:
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype)
