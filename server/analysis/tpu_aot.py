"""``xla_cost(f, ..., tpu_v5e["2x2"])``: the TPU compiler's numbers, with no TPU (runs in the analysis process).

libtpu (``pip install 'margin[tpu-aot]'``) can describe a TPU topology
without the hardware (``jax.experimental.topologies.get_topology_desc``):
its devices are compile-only, and a function whose arguments are
:class:`jax.ShapeDtypeStruct` placed on one of them is lowered and compiled
by the real TPU compiler on this machine's CPU (``../shared/reference/jax-notes.md``
§1.6; measured with jax 0.10.2 and libtpu 0.0.42: 0.2–5 s per function, no
network access).  The compiled program's cost analysis gives three fields:

``compiled_flops``
    XLA's count for the TPU program, after its fusion decisions.
``compiled_bytes``
    the TPU program's ``bytes accessed``: what its fusions read and write in
    HBM (a bf16 matmul reads about twice the fused ideal: prefetch copies and
    tiling re-reads).
``xla_seconds``
    ``optimal_seconds``: the TPU cost model's own time estimate for one chip.

They are unknown, with the reason, when libtpu is not installed, when the
TPU compiler refuses the program, when the compiled program holds a loop
(the cost analysis counts a ``while`` body once) or a conditional (one
branch, unknown which) or a custom call, and when XLA reports a negative
number (its sentinel for "unknown").  The function runs on one chip of the
topology: ``target`` picks the chip generation and its compiler model.
"""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any

from server.analysis.costs import Unsupported, jax

#: The fields this module adds to ``xla_cost``.
FIELDS = ("compiled_flops", "compiled_bytes", "xla_seconds")
#: libtpu's chip configuration per generation: on v4 and v5p one JAX device is a chip's two cores (megacore).
CHIP_CONFIGS = {"v4": "megacore", "v5": "megacore", "v5e": "default", "v6e": "default"}
_TARGET = re.compile(r"(v4|v5|v5e|v6e):([1-9][0-9]*(?:x[1-9][0-9]*){1,2})")
#: What in a compiled TPU program makes its cost analysis incomplete.
_BLOCKERS = (
    (re.compile(r"\swhile\("), "the TPU program has a loop, whose body XLA's cost analysis counts once"),
    (re.compile(r"\sconditional\("), "the TPU program has a conditional, whose branch is known only at run time"),
    (re.compile(r"\scustom-call\("), "the TPU program has a custom call, which hides its cost from XLA"),
)
INSTALL = "compiling for a TPU needs libtpu, which is not installed: pip install 'margin[tpu-aot]'"
_topologies: dict[str, Any] = {}


def compiled_cost(function: Any, structs: list[Any], target: str) -> tuple[dict[str, float], dict[str, str]]:
    """The TPU fields of ``xla_cost`` for ``function`` at ``structs`` compiled for ``target`` (``"v5e:2x2"``).

    Never raises for the TPU's sake: what cannot be known is an unknown field with the reason.
    A ``target`` that is not a topology this module knows is :class:`Unsupported`.
    """
    match = _TARGET.fullmatch(target)
    if match is None or len(match.group(2).split("x")) != (2 if match.group(1) in ("v5e", "v6e") else 3):
        raise Unsupported(f"{target!r} is not a TPU topology Margin compiles for (such as v5e:2x2 or v5:2x2x1)")
    if importlib.util.find_spec("libtpu") is None and not os.environ.get("TPU_LIBRARY_PATH"):
        return {}, dict.fromkeys(FIELDS, INSTALL)
    try:
        device = _topology(match.group(1), match.group(2)).devices[0]
    except Exception as error:  # libtpu refusing the topology, or failing to load
        return {}, dict.fromkeys(FIELDS, f"libtpu could not describe the topology {target}: {_first_line(error)}")
    sharding = jax.sharding.NamedSharding(jax.sharding.Mesh([device], ("x",)), jax.sharding.PartitionSpec())
    placed = [jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding) for s in structs]
    try:
        compiled = jax.jit(function).lower(*placed).compile()
        raw = compiled.cost_analysis()
        text = compiled.as_text() or ""
    except Exception as error:  # the CPU lowering worked, so this is the TPU compiler's limit, not the author's error
        return {}, dict.fromkeys(FIELDS, f"the TPU compiler failed: {type(error).__name__}: {_first_line(error)}")
    raw = dict((raw[0] if isinstance(raw, list) else raw) or {})
    values = {
        "compiled_flops": float(raw.get("flops", 0.0)),
        "compiled_bytes": float(raw.get("bytes accessed", 0.0)),
        "xla_seconds": float(raw.get("optimal_seconds", -1.0)),
    }
    reasons = [why for pattern, why in _BLOCKERS if pattern.search(text)]
    negative = sorted(key for key in ("flops", "bytes accessed", "optimal_seconds") if float(raw.get(key, 0.0)) < 0)
    if negative:
        reasons.append(f"XLA's TPU cost model marks part of the program unknown (a negative {', '.join(negative)})")
    if reasons:
        return values, dict.fromkeys(FIELDS, reasons[0])
    if "optimal_seconds" not in raw:
        return values, {"xla_seconds": "XLA's TPU cost model gave no time estimate"}
    return values, {}


def _topology(generation: str, shape: str) -> Any:
    """The compile-only topology (kept: describing one costs ~0.1 s)."""
    key = f"{generation}:{shape}"
    found = _topologies.get(key)
    if found is None:
        os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")  # no Cloud metadata server to ask (JAX sets it too)
        from jax.experimental.topologies import get_topology_desc

        dims = [int(d) for d in shape.split("x")]
        bounds = (min(dims[0], 2), min(dims[1], 2), 1)  # hosts of 2x2 chips at most; libtpu needs a divisor
        found = get_topology_desc(
            key, "tpu", chip_config_name=CHIP_CONFIGS[generation], chips_per_host_bounds=bounds, num_slices=1
        )
        _topologies[key] = found
    return found


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
