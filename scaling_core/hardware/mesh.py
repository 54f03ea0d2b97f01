"""A slice's axes, one at a time or several as one mesh axis: ``s["x"]``, ``s["0"]``, ``s["xy"]``.

JAX lays a logical mesh over a slice by giving each mesh axis one or more
physical axes: ``Mesh(devices.reshape(16, 4), ("data", "model"))`` on a 4x4x4
slice gives ``data`` the axes x and y and ``model`` the axis z.  Margin writes
that as ``data = s["xy"]`` and ``model = s["z"]``: the name is the author's,
the axes are the slice's, and a collective over the mesh axis is one call,
``allreduce_axis(V, data)``.

A mesh axis over several axes of a TPU torus is one group of chips whose
collectives use every one of those axes' links at once: ``ici_bw`` is their
sum, which gives the book's V/(k·W) for k axes with wraparound (sharding.md,
"AllGather over multiple axes"); ``wraparound`` is 1 only when every axis
wraps; ``hops`` adds up.  ``alltoall_share`` is taken so that an AllToAll costs
the book's V·max(A, B, …)/(4·N·W) on a mesh A×B×… (the narrowest cut).  A GPU
slice's axes are levels of a switched network (hosts, then the GPUs of a host),
not a torus: their collectives are not one ring, so they are named one at a time.
"""

from __future__ import annotations

import math
import re

from scaling_core.expr.values import Record
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity

#: The names of a slice's axes, in order.
AXIS_NAMES = "xyz"
_BANDWIDTH = dimension.pack({"information": 1, "time": -1})
_SEPARATORS = re.compile(r"[\s,]+")


class MeshAxes:
    """The slicer of a slice: an axis by name (``"x"``) or position (``"0"``), or several as a mesh axis."""

    def __init__(self, name: str, records: list[Record], switched: bool) -> None:
        self.name = name
        self.records = records
        self.switched = switched
        self.cache: dict[str, Record] = {}

    def __call__(self, key: str) -> Record | str:
        """The axis record ``key`` names, or why it names none (H001)."""
        key = key.strip()
        names = AXIS_NAMES[: len(self.records)]
        if key.isdigit() and int(key) < len(self.records):
            return self.records[int(key)]
        letters = _SEPARATORS.sub("", key)
        if letters and all(c in names for c in letters):
            twice = next((c for c in letters if letters.count(c) > 1), None)
            if twice is not None:
                return f'"{key}" names axis "{twice}" twice: name each axis of a mesh axis once'
            if len(letters) == 1:
                return self.records[names.index(letters)]
            if self.switched:
                return (
                    f'"{key}": the axes of a GPU slice are levels of a switched network, not one ring: '
                    'name one axis at a time: "x" (hosts) or "y" (the GPUs of a host)'
                )
            picked = "".join(c for c in names if c in letters)  # in the slice's order: ["yx"] is ["xy"]
            if picked not in self.cache:
                self.cache[picked] = self._mesh_axis(picked)
            return self.cache[picked]
        legal = ", ".join(f'"{n}"' for n in names)
        numbers = ", ".join(f'"{i}"' for i in range(len(self.records)))
        several = "" if self.switched else f', or several as one mesh axis ("{names[:2]}")'
        return f'"{key}" is not an axis of this slice: axes are {legal} (or {numbers}){several}'

    def _mesh_axis(self, picked: str) -> Record:
        parts = [self.records[AXIS_NAMES.index(c)] for c in picked]

        def each(field: str) -> list[float]:
            return [float(part.fields[field].value) for part in parts]

        sizes, bandwidths, shares = each("size"), each("ici_bw"), each("alltoall_share")
        size = math.prod(sizes)
        bandwidth = sum(bandwidths)
        # The narrowest cut: halving axis i crosses share_i·V over the N/X_i lines of that axis.
        slowest = max((s * x / (size * w) for s, x, w in zip(shares, sizes, bandwidths) if w > 0), default=0.0)
        written = ", ".join(picked)
        fields = {
            "size": Quantity(float(size), 0, False, "chip"),
            "wraparound": Quantity(float(all(each("wraparound"))), 0, False, None),
            "ici_bw": Quantity(bandwidth, _BANDWIDTH),
            "hops": Quantity(sum(each("hops")), 0, False, None),
            "ici_hop_latency": parts[0].fields["ici_hop_latency"],
            "alltoall_share": Quantity(bandwidth * slowest, 0, False, None),
        }
        sources = {
            "size": f"the product of the sizes of axes {written}",
            "wraparound": f"1 when every one of axes {written} wraps around",
            "ici_bw": f"the sum of the ici_bw of axes {written}: a collective uses all their links at once (sharding.md)",
            "hops": f"the sum of the hops of axes {written}",
            "ici_hop_latency": f"derived from {self.name}",
            "alltoall_share": "so that an AllToAll costs the book's V·max(A, B, …)/(4·N·W) (sharding.md)",
        }
        notes = {"ici_bw": "with wraparound on every axis, V/ici_bw is the book's V/(k·W) over k axes"}
        title = f"mesh axis over axes {written} of {self.name}: {size:g} chips"
        return Record(f'{self.name}["{picked}"]', title, fields, sources, notes, kind="axis")
