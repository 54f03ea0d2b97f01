"""Collective and transfer times on TPU ICI and GPU NVLink.

Sources: How To Scale Your Model, "Sharded Matrices" (sharding.md) for
TPU rings and tori, "How to Think About TPUs" (tpus.md) for point-to-point
transfers and hop latency, and "How to Think About GPUs" (gpus.md) for
NVLink collectives.  V is the total bytes of the (gathered) array and X the
axis size.  TPU formulas take the per-link bandwidth from the chip record.
"""

from __future__ import annotations

from scaling_core.formulas.model import BOOK, formula

SHARDING = f"{BOOK}/sharding/"
TPUS = f"{BOOK}/tpus/"
GPUS = f"{BOOK}/gpus/"

FORMULAS = [
    formula(
        "allgather_time", "V:byte X chip:chip",
        "max(X * chip.ici_hop_latency / 2, V / chip.ici_bw_bidi)",
        "AllGather over an axis of X chips with wraparound (a bidirectional ring): max(X·t_hop/2, V/W_bidi); "
        "independent of X unless latency-bound.", SHARDING, "s",
    ),
    formula(
        "allgather_time_nowrap", "V:byte X chip:chip",
        "max((X - 1) * chip.ici_hop_latency, V * (X - 1) / (X * chip.ici_bw_oneway))",
        "AllGather without wraparound: X−1 hops, each moving V/X at the one-way bandwidth.", SHARDING, "s",
    ),
    formula(
        "allgather_time_axes", "V:byte axes chip:chip", "V / (axes * chip.ici_bw_bidi)",
        "AllGather over several torus axes at once: V / (axes·W_bidi).", SHARDING, "s",
    ),
    formula(
        "reducescatter_time", "V:byte X chip:chip",
        "max(X * chip.ici_hop_latency / 2, V / chip.ici_bw_bidi)",
        "ReduceScatter costs the same as AllGather: max(X·t_hop/2, V/W_bidi).", SHARDING, "s",
    ),
    formula(
        "allreduce_time", "V:byte X chip:chip",
        "2 * max(X * chip.ici_hop_latency / 2, V / chip.ici_bw_bidi)",
        "AllReduce = ReduceScatter + AllGather: 2·max(X·t_hop/2, V/W_bidi).", SHARDING, "s",
    ),
    formula(
        "alltoall_time", "V:byte X chip:chip",
        "max(X * chip.ici_hop_latency / 2, V / (4 * chip.ici_bw_bidi))",
        "AllToAll on a bidirectional ring: V/(4·W_bidi), a quarter of an AllGather.", SHARDING, "s",
    ),
    formula(
        "p2p_time", "V:byte links chip:chip", "V / (links * chip.ici_bw_oneway)",
        "Point-to-point transfer over several links: V / (links·W_oneway).", TPUS, "s",
    ),
    formula(
        "first_byte_latency", "hops chip:chip", "hops * chip.ici_hop_latency",
        "Time for the first byte to cross several hops: hops·t_hop.", TPUS, "s",
    ),
    formula(
        "allgather_time_gpu", "V:byte N chip:chip", "V * (N - 1) / (N * chip.ici_egress_oneway)",
        "AllGather (or ReduceScatter) among N GPUs of a node over NVLink: V(N−1)/(N·W), W the GPU's egress one way.",
        GPUS, "s",
    ),
    formula(
        "allreduce_time_gpu", "V:byte N chip:chip", "2 * V * (N - 1) / (N * chip.ici_egress_oneway)",
        "AllReduce among N GPUs of a node: twice the AllGather, 2V(N−1)/(N·W).", GPUS, "s",
    ),
    formula(
        "alltoall_time_gpu", "V:byte N chip:chip", "V * (N - 1) / (N ** 2 * chip.ici_egress_oneway)",
        "AllToAll among N GPUs of a node: V(N−1)/(N²·W) ≈ V/(N·W).", GPUS, "s",
    ),
]  # fmt: skip
