"""``comm_bytes``: what the collectives of a ``shard_map`` program move (runs in the analysis process).

The function is traced to a jaxpr with :class:`jax.ShapeDtypeStruct`
arguments (no allocation, no devices used).  Every collective inside a
``shard_map`` body is costed with the ring algorithm, as bytes **each device
sends** (and receives) over the named mesh axes, where V is the per-device
operand of the collective and n the number of devices along its axes:

=================  ========================  =====================================
field              collectives               bytes per device
=================  ========================  =====================================
``all_gather``     ``all_gather``            (n − 1) · V   (V: the local shard)
``reduce_scatter`` ``psum_scatter``          (n − 1)/n · V (V: the local full array)
``all_reduce``     ``psum``, ``pmax``, ...   2 (n − 1)/n · V
``all_to_all``     ``all_to_all``            (n − 1)/n · V
``ppermute``       ``ppermute``              V
=================  ========================  =====================================

``total`` sums them; ``<field>_<axes>`` (``all_gather_x``, ``all_reduce_x_y``)
splits each by the mesh axes it runs over.  A collective inside a static loop
counts once per iteration.  Unknown (with the reason): a program with no
``shard_map`` (XLA inserts the collectives of ``jit`` shardings itself, after
this point), a ``while_loop`` or ``cond``, or a collective this table lacks.
"""

from __future__ import annotations

import math
from typing import Any

import jax as _jax

from server.analysis.costs import Walk, nbytes

FIELDS = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "ppermute")
#: Primitive -> field.
COLLECTIVES = {
    "all_gather": "all_gather", "all_gather_invariant": "all_gather",
    "reduce_scatter": "reduce_scatter", "psum_scatter": "reduce_scatter",
    "psum": "all_reduce", "psum2": "all_reduce", "psum_invariant": "all_reduce",
    "pmax": "all_reduce", "pmin": "all_reduce",
    "all_to_all": "all_to_all", "ppermute": "ppermute",
}  # fmt: skip
#: Primitives that name a mesh axis but move nothing between devices.
jax: Any = _jax  # untyped here, as in costs.py
NO_TRAFFIC = frozenset(("axis_index", "pbroadcast", "pvary", "pcast", "psum_invariant_vma"))


def comm_bytes(function: Any, structs: list[Any]) -> tuple[dict[str, float], dict[str, str]]:
    """The ``comm_bytes`` record's fields for ``function`` at ``structs``."""
    closed = jax.make_jaxpr(function)(*structs)
    walk = Collectives()
    walk.jaxpr(closed.jaxpr, 1.0)
    values = {name: 0.0 for name in FIELDS}
    for (name, axes), amount in sorted(walk.bytes.items()):
        values[name] += amount
        key = f"{name}_{'_'.join(axes)}"
        if key.replace("_", "").isalnum() and key.isascii():
            values[key] = values.get(key, 0.0) + amount
    values["total"] = sum(values[name] for name in FIELDS)
    reasons = list(walk.blockers)
    if not walk.meshes:
        reasons.insert(0, "it has no shard_map (collectives XLA inserts for jit shardings are not in the jaxpr)")
    unknown = {name: reasons[0] for name in values} if reasons else {}
    return values, unknown


class Collectives(Walk):
    """Bytes per device of each (collective, mesh axes) inside ``shard_map`` bodies."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes: dict[tuple[str, tuple[str, ...]], float] = {}
        #: The meshes of the ``shard_map`` bodies being walked (innermost last).
        self.meshes: list[dict[str, int]] = []
        self._inside: list[dict[str, int]] = []

    def shard_map(self, eqn: Any, times: float) -> None:
        """Walk the body once (bytes are per device), knowing the mesh's axis sizes."""
        mesh = {str(name): int(size) for name, size in dict(eqn.params["mesh"].shape).items()}
        self.meshes.append(mesh)
        self._inside.append(mesh)
        try:
            for sub in (eqn.params["jaxpr"],):
                self.jaxpr(getattr(sub, "jaxpr", sub), times)
        finally:
            self._inside.pop()

    def leaf(self, eqn: Any, times: float) -> None:
        """Cost one collective with the ring formula of its kind."""
        name = eqn.primitive.name
        field = COLLECTIVES.get(name)
        if field is None:
            if self._inside and name not in NO_TRAFFIC and ("axis_name" in eqn.params or "axes" in eqn.params):
                self.block(f"the collective {name} is not modelled")
            return
        if not self._inside:
            self.block(f"a {name} outside shard_map")
            return
        mesh = self._inside[-1]
        axes = eqn.params.get("axes", eqn.params.get("axis_name"))
        axes = tuple(axes) if isinstance(axes, tuple | list) else (axes,)
        if not all(isinstance(a, str) and a in mesh for a in axes):
            self.block(f"a {name} over axes {axes} that are not all named axes of the mesh")
            return
        n = math.prod(mesh[a] for a in axes)
        volume = sum(nbytes(v.aval) for v in eqn.invars)
        if field == "ppermute":
            moved = volume if any(src != dst for src, dst in eqn.params.get("perm", ())) else 0.0
        else:
            moved = {"all_gather": (n - 1) * volume, "all_reduce": 2 * (n - 1) / n * volume}.get(
                field, (n - 1) / n * volume
            )
        key = (field, tuple(str(a) for a in axes))
        self.bytes[key] = self.bytes.get(key, 0.0) + times * moved
