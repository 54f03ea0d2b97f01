"""Slices as values: ``tpu_v5p["4x4x4"]``, ``tpu_v5e["16x16"]``, ``h100["8x8"]`` (8 hosts × 8 GPUs).

A slice is a record computed from its chip's record and the generation's
topology rules (below, each with its source): ``chips``, ``hosts``, ``axes``
(sizes), ``wraparound`` per axis (1 or 0), the totals ``flops_*``, ``hbm``,
``hbm_bw``, ``dcn_bw``, ``bisection_bw`` and ``ici_bw`` per axis; for GPUs
also ``nvlink_domain`` and ``scaleout_bw``.  Indexing a slice again with an
axis (``["x"]`` or ``["0"]``) gives that axis as a record for the collective
formulas of ``formulas/axes.py``: ``size``, ``wraparound``, ``ici_bw``,
``hops``, ``ici_hop_latency`` and ``alltoall_share``.  Several axes of a TPU
slice at once (``["xy"]``) are one *mesh axis*, the way a JAX mesh axis spans
several physical axes: its chips form one group, served by every one of its
axes' links (the book's V/(k·W) for k axes).  A shape that is not a legal slice
of the chip, or a chip with no slice rules, is error H001.
"""

from __future__ import annotations

import math
import re
from dataclasses import field, replace
from functools import partial

from scaling_core.expr.values import Record
from scaling_core.hardware.mesh import AXIS_NAMES, MeshAxes
from scaling_core.records import record
from scaling_core.units import dimension
from scaling_core.units.arrays import numpy
from scaling_core.units.quantity import Quantity

BOOK_TPUS = "https://jax-ml.github.io/scaling-book/tpus/"
BOOK_GPUS = "https://jax-ml.github.io/scaling-book/gpus/"
_BANDWIDTH = dimension.pack({"information": 1, "time": -1})
_TIME = dimension.pack({"time": 1})
_SHAPE = re.compile(r"\s*\d+(?:\s*[x×]\s*\d+)*\s*")
#: Largest number of hosts a GPU slice may name (a bound, not a product limit).
MAX_GPU_HOSTS = 100_000


@record
class Topology:
    """How a generation's chips form slices."""

    kind: str  # "torus" (TPU) or "gpu" (hosts × GPUs)
    chips_per_host: int
    #: TPU: the full pod (sorted sizes); every larger-than-small slice fits in it.
    pod: tuple[int, ...] = ()
    #: TPU: legal shapes listed one by one (sorted sizes); 3D tori also allow any multiple of 4 per axis.
    listed: tuple[tuple[int, ...], ...] = ()
    #: The wraparound rule: "multiple of 4" (v4/v5p) or "full 16" (v5e/v6e).
    wrap: str = ""
    nvlink_domain: int = 0
    source: str = BOOK_TPUS
    notes: tuple[str, ...] = field(default=())


_SMALL_3D = ((1, 2, 2), (2, 2, 2), (2, 2, 4), (2, 4, 4))
_V5E = ((1, 1), (2, 2), (2, 4), (4, 4), (4, 8), (8, 8), (8, 16), (16, 16))

#: Topology rules per chip name.  Pods and host sizes: the book's table (tpus.md); wraparound: its footnote
#: ("on inference chips when we have a full 16 axis, or on training chips (v*p) when we have an axis which is
#: a multiple of 4"); legal shapes: Google Cloud's topology tables for each generation.
TOPOLOGIES: dict[str, Topology] = {
    "tpu_v4": Topology("torus", 4, (16, 16, 16), _SMALL_3D, "multiple of 4", source="https://cloud.google.com/tpu/docs/v4"),
    "tpu_v5p": Topology("torus", 4, (16, 20, 28), _SMALL_3D, "multiple of 4", source="https://cloud.google.com/tpu/docs/v5p"),
    "tpu_v5e": Topology("torus", 8, (16, 16), _V5E, "full 16", source="https://cloud.google.com/tpu/docs/v5e"),
    "tpu_v6e": Topology("torus", 8, (16, 16), _V5E, "full 16", source="https://cloud.google.com/tpu/docs/v6e"),
    "a100": Topology("gpu", 8, nvlink_domain=8, source=BOOK_GPUS),
    "h100": Topology("gpu", 8, nvlink_domain=8, source=BOOK_GPUS),
    "h200": Topology("gpu", 8, nvlink_domain=8, source=BOOK_GPUS),
    "b200": Topology("gpu", 8, nvlink_domain=8, source=BOOK_GPUS),
    "gb200": Topology("gpu", 4, nvlink_domain=72, source="https://www.nvidia.com/en-us/data-center/gb200-nvl72/"),
}  # fmt: skip


#: Why a chip has no slice rules, when Margin knows why.
NO_RULES = {
    "tpu7x": "the book gives only its pod (4x4x576) and its hosts (2x2x1), not its legal slice shapes or when "
    "its axes wrap around",
}


def with_slices(records: dict[str, Record]) -> dict[str, Record]:
    """The records, each chip with a topology made indexable by its slices (a chip without one says so)."""
    found = {}
    for name, chip in records.items():
        if name in TOPOLOGIES:
            chip = replace(chip, slicer=_Slicer(chip, TOPOLOGIES[name]))
        elif chip.kind in ("tpu", "gpu"):
            chip = replace(chip, slicer=partial(_no_rules, name))
        found[name] = chip
    return found


def _no_rules(name: str, key: str) -> str:
    why = NO_RULES.get(name, "Margin knows no topology for it")
    chips = ", ".join(TOPOLOGIES)
    return f'{name} has no slice rules yet, so "{key}" cannot be checked: {why}. Use its per-chip fields, or a chip with slice rules ({chips})'


def legal_shapes(topology: Topology) -> str:
    """The legal shapes in words, for H001."""
    if topology.kind == "gpu":
        sizes = ", ".join(str(g) for g in _divisors(topology.chips_per_host))
        return f"HOSTSxGPUS with GPUS one of {sizes} (e.g. 8x{topology.chips_per_host})"
    listed = ", ".join("x".join(map(str, s)) for s in topology.listed)
    if len(topology.pod) == 3:
        pod = "x".join(map(str, topology.pod))
        return f"{listed}, or each axis a multiple of 4 up to {pod} (4x4x4, 4x4x8, 4x8x8, 8x8x8, ...)"
    return listed


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _parse(key: str) -> tuple[int, ...] | None:
    if not _SHAPE.fullmatch(key):
        return None
    return tuple(int(part) for part in re.split(r"[x×]", key.replace(" ", "")))


def _legal(topology: Topology, axes: tuple[int, ...]) -> bool:
    if topology.kind == "gpu":
        return len(axes) == 2 and 1 <= axes[0] <= MAX_GPU_HOSTS and axes[1] in _divisors(topology.chips_per_host)
    if len(axes) != len(topology.pod):
        return False
    ordered = tuple(sorted(axes))
    if ordered in topology.listed:
        return True
    return len(axes) == 3 and all(a % 4 == 0 for a in ordered) and all(a <= p for a, p in zip(ordered, topology.pod))


class _Slicer:
    """``chip["shape"]``: builds (once) the slice record of a legal shape."""

    def __init__(self, chip: Record, topology: Topology) -> None:
        self.chip = chip
        self.topology = topology
        self.cache: dict[str, Record | str] = {}

    def __call__(self, key: str) -> Record | str:
        found = self.cache.get(key)
        if found is None:
            if len(self.cache) >= 256:  # keys typed in an editor: keep memory flat
                self.cache.clear()
            found = self.cache[key] = self._build(key)
        return found

    def _build(self, key: str) -> Record | str:
        axes = _parse(key)
        if axes is None or not _legal(self.topology, axes):
            what = "not a shape" if axes is None else f"not a slice of {self.chip.name}"
            return f'"{key}" is {what}: legal shapes are {legal_shapes(self.topology)}'
        if self.topology.kind == "gpu":
            return _gpu_slice(self.chip, self.topology, axes)
        return _tpu_slice(self.chip, self.topology, axes)


def _count(value: float, label: str | None = None) -> Quantity:
    return Quantity(float(value), 0, False, label)


def _array(values: list[float], dim: int, label: str | None = None) -> Quantity:
    return Quantity(numpy().asarray(values, dtype=numpy().float64), dim, False, label)


_TOTALS = ("flops_bf16", "flops_fp8", "flops_int8", "hbm", "hbm_bw", "dcn_bw")


def _totals(chip: Record, chips: int) -> dict[str, Quantity]:
    fields: dict[str, Quantity] = {}
    for name in _TOTALS:
        if name in chip.fields:
            value = chip.fields[name]
            fields[name] = Quantity(value.value * chips, value.dim, False, None)
    return fields


_PER_LINK = ("ici_bw_oneway", "ici_bw_bidi", "ici_links", "ici_hop_latency", "ici_egress_oneway", "ici_egress_bidi")


def _per_link(chip: Record) -> dict[str, Quantity]:
    return {name: chip.fields[name] for name in _PER_LINK if name in chip.fields}


def _tpu_slice(chip: Record, topology: Topology, axes: tuple[int, ...]) -> Record:
    chips = math.prod(axes)
    wraps = [(a % 4 == 0) if topology.wrap == "multiple of 4" else a == 16 for a in axes]
    oneway = chip.fields["ici_bw_oneway"].value
    links = chip.fields["ici_links"].value / (2 * len(topology.pod))  # links per axis and direction
    per_axis = [0.0 if a == 1 else links * oneway * (2 if w else 1) for a, w in zip(axes, wraps)]
    longest = max(range(len(axes)), key=lambda i: axes[i])
    crossing = 0.0 if axes[longest] == 1 else chips / axes[longest] * links * (2 if wraps[longest] else 1)
    hosts = math.ceil(chips / topology.chips_per_host)
    fields = {
        "chips": _count(chips, "chip"),
        "hosts": _count(hosts, "host"),
        "axes": _array([float(a) for a in axes], 0),
        "wraparound": _array([float(w) for w in wraps], 0),
        **_totals(chip, chips),
        "bisection_bw": Quantity(crossing * oneway, _BANDWIDTH),
        "ici_bw": _array(per_axis, _BANDWIDTH),
        **_per_link(chip),
    }
    latency = chip.fields.get("ici_hop_latency", Quantity(0.0, _TIME))
    # An axis of 1 has no link to use; its record keeps the links' bandwidth so that a collective over it is 0 s.
    details = [
        _axis(i, a, w, bw if a > 1 else links * oneway, latency, _ring_share(a))
        for i, (a, w, bw) in enumerate(zip(axes, wraps, per_axis))
    ]
    rule = "an axis that is a multiple of 4" if topology.wrap == "multiple of 4" else "only a full axis of 16"
    return _record(chip, topology, axes, fields, details, f"wraparound on {rule}")


def _ring_share(size: int) -> float:
    """The share of V an AllToAll over a ring or line of ``size`` chips sends across its middle, each way:
    ⌊X/2⌋·⌈X/2⌉/X², ¼ for an even X (the book's V/(4·W))."""
    return (size // 2) * ((size + 1) // 2) / size**2


def _gpu_slice(chip: Record, topology: Topology, axes: tuple[int, ...]) -> Record:
    hosts, per_host = axes
    chips = hosts * per_host
    egress = chip.fields["ici_egress_oneway"].value
    nic = chip.fields["dcn_bw"].value if "dcn_bw" in chip.fields else 0.0
    scaleout = nic * per_host
    in_domain = chips <= topology.nvlink_domain
    across = 0.0 if hosts == 1 else (egress if in_domain else scaleout)
    within = 0.0 if per_host == 1 else egress
    bisection = chips / 2 * (egress if in_domain else nic) if chips > 1 else 0.0
    fields = {
        "chips": _count(chips, "chip"),
        "hosts": _count(hosts, "host"),
        "axes": _array([float(hosts), float(per_host)], 0),
        "wraparound": _array([0.0, 0.0], 0),
        **_totals(chip, chips),
        "bisection_bw": Quantity(bisection, _BANDWIDTH),
        "ici_bw": _array([across, within], _BANDWIDTH),
        "nvlink_domain": _count(min(chips, topology.nvlink_domain), "chip"),
        "scaleout_bw": Quantity(scaleout, _BANDWIDTH),
        **_per_link(chip),
    }
    zero = Quantity(0.0, _TIME)
    # Switched networks: an AllToAll among N sends (N-1)/N² of V through each GPU's link (gpus.md).
    details = [
        _axis(0, hosts, False, across or (egress if in_domain else scaleout), zero, (hosts - 1) / hosts**2),
        _axis(1, per_host, False, within or egress, zero, (per_host - 1) / per_host**2),
    ]
    return _record(
        chip, topology, axes, fields, details, "no wraparound: NVLink and the scale-out network are switched"
    )


def _axis(index: int, size: int, wraps: bool, bandwidth: float, latency: Quantity, share: float) -> dict[str, Quantity]:
    hops = size / 2 if wraps else size - 1
    return {
        "size": _count(size, "chip"),
        "wraparound": _count(1.0 if wraps else 0.0),
        "ici_bw": Quantity(bandwidth, _BANDWIDTH),
        "hops": _count(hops),
        "ici_hop_latency": latency,
        "alltoall_share": _count(share),
        "index": _count(index),
    }


def _record(
    chip: Record,
    topology: Topology,
    axes: tuple[int, ...],
    fields: dict[str, Quantity],
    details: list[dict[str, Quantity]],
    rule: str,
) -> Record:
    shape = "x".join(map(str, axes))
    name = f'{chip.name}["{shape}"]'
    chips, hosts = int(fields["chips"].value), int(fields["hosts"].value)
    sources: dict[str, str] = {}
    for key in fields:
        if key in _TOTALS:
            sources[key] = f"{chip.name}.{key} × {chips} chips; {chip.sources.get(key, '')}"
        elif key in _PER_LINK:
            sources[key] = chip.sources.get(key, "")
        else:
            sources[key] = f"derived from {chip.name} and its topology: {topology.source}"
    title = f"{chip.title}, {shape} slice: {chips} chips on {hosts} host{'s' * (hosts != 1)}; {rule}"
    axis_records = [
        Record(f'{name}["{AXIS_NAMES[i]}"]', f"axis {AXIS_NAMES[i]} of {name}: {int(d['size'].value)} chips", d,
               {k: f"derived from {name}" for k in d}, _axis_notes(d, topology.kind == "gpu"), kind="axis")
        for i, d in enumerate(details)
    ]  # fmt: skip
    notes = {"bisection_bw": "one direction, across the cut that halves the longest axis"}
    if topology.kind == "gpu":
        notes["ici_bw"] = (
            "axis 0 (hosts): NVLink within the NVLink domain, else scale-out per host; axis 1: NVLink egress"
        )
    return Record(
        name, title, fields, sources, notes, "slice", slicer=MeshAxes(name, axis_records, topology.kind == "gpu")
    )


def _axis_notes(fields: dict[str, Quantity], switched: bool) -> dict[str, str]:
    share = "(N−1)/N² on a switched network (gpus.md)" if switched else "⌊X/2⌋·⌈X/2⌉/X², ¼ for even X (sharding.md)"
    notes = {"alltoall_share": f"the share of V an AllToAll over this axis sends through ici_bw: {share}"}
    if fields["size"].value == 1:
        notes["ici_bw"] = "an axis of one chip uses no link: a collective over it moves nothing and takes 0 s"
    return notes
