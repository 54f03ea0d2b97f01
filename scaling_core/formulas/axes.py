"""Collectives over one axis of a slice: ``allgather_axis(V, tpu_v5p["4x4x4"]["x"])``.

An axis record (``slice["x"]``, see ``hardware/slices.py``) carries what the
ring formulas of "Sharded Matrices" need: its ``size`` X, whether it has
``wraparound``, the bandwidth ``ici_bw`` a chip sends along it (both
directions with wraparound, the book's W_ici; one direction without), the
``hops`` a ring's latency crosses (X/2 with wraparound, X − 1 without) and the
per-hop latency.  One body serves both cases: with wraparound
V·X/(X·W_bidi) = V/W_ici, the book's bidirectional-ring cost; without,
V(X − 1)/(X·W_oneway), its one-way line.  On a GPU slice the axes are the hosts
(scale-out, or NVLink inside an NVLink domain) and the GPUs of a host
(NVLink), with no wraparound: V(N − 1)/(N·W), the book's GPU cost.

A mesh axis over several axes (``slice["xy"]``, see ``hardware/mesh.py``) is an
axis record too: its ``ici_bw`` sums its axes' links, so the same body gives the
book's V/(k·W) over k axes.  An AllToAll sends ``alltoall_share`` of V through
``ici_bw``: ¼ on a ring or line of even size (V/(4·W), the bisection), (N − 1)/N²
on a switched GPU axis, V·max(A, B, …)/(4·N·W) on a mesh axis.
"""

from __future__ import annotations

from scaling_core.formulas.model import BOOK, formula

SHARDING = f"{BOOK}/sharding/"

_GATHER = "max(axis.hops * axis.ici_hop_latency, V * (axis.size - 1 + axis.wraparound) / (axis.size * axis.ici_bw))"

FORMULAS = [
    formula(
        "allgather_axis", "V:byte axis:axis", _GATHER,
        "AllGather of V bytes over one axis of a slice (tpu_v5p[\"4x4x4\"][\"x\"]): "
        "max(hops·t_hop, V/W_ici) with wraparound, max((X−1)·t_hop, V(X−1)/(X·W_oneway)) without.", SHARDING, "s",
    ),
    formula(
        "reducescatter_axis", "V:byte axis:axis", _GATHER,
        "ReduceScatter over one axis of a slice: the same cost as the AllGather.", SHARDING, "s",
    ),
    formula(
        "allreduce_axis", "V:byte axis:axis", f"2 * {_GATHER}",
        "AllReduce over one axis of a slice: ReduceScatter + AllGather, twice the AllGather.", SHARDING, "s",
    ),
    formula(
        "alltoall_axis", "V:byte axis:axis",
        "max(axis.hops * axis.ici_hop_latency, V * axis.alltoall_share / axis.ici_bw)",
        "AllToAll of V bytes over one axis of a slice: V/(4·W_ici) on a ring, V(N−1)/(N²·W) among GPUs, "
        "V·max(A, B, …)/(4·N·W) over a mesh axis; at least hops·t_hop.", SHARDING, "s",
    ),
]  # fmt: skip
