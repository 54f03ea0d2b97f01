"""The hardware catalog: one data file per chip, validated, with derived fields.

Each ``data/chips/NAME.toml`` holds a title, a kind (tpu or gpu) and fields
written in the calc language with their units (``"989.4 TFLOP/s"``), so the
data doubles as a test of the parser.  Every field cites a source URL; a
``note`` records the choice where public sources disagree.  Interconnect
bandwidth is always per link and explicitly one-way or bidirectional.
Projects add chips or override fields in their configuration.  This module
is the only reader of the data files.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from scaling_core.expr.constant import evaluate_constant
from scaling_core.expr.values import Record
from scaling_core.packaged_data import file_names, read_toml
from scaling_core.records import record
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity

_RATE = dimension.pack({"computation": 1, "time": -1})
_BYTES = dimension.pack({"information": 1})
_BANDWIDTH = dimension.pack({"information": 1, "time": -1})
_TIME = dimension.pack({"time": 1})

#: Every field a chip may have, with its dimension and meaning.
FIELDS: dict[str, tuple[int, str]] = {
    "flops_bf16": (_RATE, "dense bf16 FLOP/s"),
    "flops_fp8": (_RATE, "dense fp8 FLOP/s"),
    "flops_int8": (_RATE, "dense int8 OP/s"),
    "hbm": (_BYTES, "HBM capacity"),
    "hbm_bw": (_BANDWIDTH, "HBM bandwidth"),
    "ici_bw_oneway": (_BANDWIDTH, "interconnect (ICI or NVLink) bandwidth per link, one direction"),
    "ici_bw_bidi": (_BANDWIDTH, "interconnect bandwidth per link, both directions"),
    "ici_links": (0, "interconnect links per chip"),
    "ici_hop_latency": (_TIME, "latency per interconnect hop"),
    "dcn_bw": (_BANDWIDTH, "data-centre network egress per chip"),
    "pcie_bw": (_BANDWIDTH, "host PCIe bandwidth per chip, one direction"),
}
REQUIRED = ("flops_bf16", "hbm", "hbm_bw", "ici_bw_oneway", "ici_bw_bidi", "ici_links")

#: Derived fields: name -> (inputs, how to compute, formula text, meaning).
DERIVED: dict[str, tuple[tuple[str, str], Callable[[Quantity, Quantity], Quantity], str, str]] = {
    "critical_intensity": (("flops_bf16", "hbm_bw"), lambda c, w: c / w, "flops_bf16 / hbm_bw", "FLOP per HBM byte where a kernel turns compute-bound"),
    "ici_intensity": (("flops_bf16", "ici_bw_bidi"), lambda c, w: c / w, "flops_bf16 / ici_bw_bidi", "FLOP per ICI byte (one link, both directions)"),
    "ici_egress_oneway": (("ici_links", "ici_bw_oneway"), lambda n, w: n * w, "ici_links * ici_bw_oneway", "all links, one direction"),
    "ici_egress_bidi": (("ici_links", "ici_bw_bidi"), lambda n, w: n * w, "ici_links * ici_bw_bidi", "all links, both directions"),
}  # fmt: skip


@record
class RawChip:
    """A chip as written in a data file or a config table, field texts unparsed."""

    name: str
    title: str
    kind: str
    fields: dict[str, str]
    sources: dict[str, str]
    notes: dict[str, str]


def raw_chip(name: str, entry: Any) -> tuple[RawChip | None, list[str]]:
    """Read one chip table; return the chip (or None) and any structural problems."""
    if not isinstance(entry, dict):
        return None, [f"chip '{name}' must be a table"]
    fields = entry.get("fields", {})
    if not isinstance(fields, dict):
        return None, [f"chip '{name}': 'fields' must be a table"]
    problems = []
    texts, sources, notes = {}, {}, {}
    for key, spec in fields.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("value"), str):
            problems.append(f"chip '{name}': field '{key}' needs value = \"NUMBER UNIT\" (and a source)")
            continue
        texts[key] = spec["value"]
        sources[key] = str(spec.get("source", ""))
        if "note" in spec:
            notes[key] = str(spec["note"])
    chip = RawChip(name, str(entry.get("title", name)), str(entry.get("kind", "chip")), texts, sources, notes)
    return chip, problems


@lru_cache(maxsize=1)
def packaged_chips() -> tuple[RawChip, ...]:
    """Every packaged chip, unparsed (immutable; loaded once)."""
    chips = []
    for name in file_names("scaling_core.hardware", "data/chips", ".toml"):
        chip, problems = raw_chip(name[:-5], read_toml("scaling_core.hardware", f"data/chips/{name}"))
        if chip is None or problems:
            raise RuntimeError(f"bad packaged chip {name}: {problems}")
        chips.append(chip)
    return tuple(chips)


def merge(base: tuple[RawChip, ...], overrides: list[RawChip]) -> tuple[RawChip, ...]:
    """Chips from the config add to the catalog; one with a packaged name overrides its fields."""
    merged = {chip.name: chip for chip in base}
    for chip in overrides:
        if chip.name in merged:
            old = merged[chip.name]
            merged[chip.name] = RawChip(
                chip.name, chip.title if chip.title != chip.name else old.title, old.kind,
                {**old.fields, **chip.fields}, {**old.sources, **chip.sources}, {**old.notes, **chip.notes},
            )  # fmt: skip
        else:
            merged[chip.name] = chip
    return tuple(merged.values())


def build_records(chips: tuple[RawChip, ...]) -> tuple[dict[str, Record], list[str]]:
    """Evaluate every field into a quantity (as a calc-language constant) and add derived fields; report bad fields.

    A bad field (not a value, the wrong unit, not finite, or for a catalog field
    not above zero) is reported and left out of the record's fields, as is a
    derived field that cannot be computed from it; both are in the record's
    ``unknown``, so a draft using one gets an untested T003 with the reason, never
    a value nobody wrote (and never a division by zero).
    """
    records: dict[str, Record] = {}
    problems: list[str] = []
    for chip in chips:
        values: dict[str, Quantity] = {}
        unknown: dict[str, str] = {}
        for key, text in chip.fields.items():
            value, problem = _field_value(key, text)
            if value is None:
                problems.append(f"chip '{chip.name}': field '{key}' = '{text}' {problem}")
                unknown[key] = f"chip '{chip.name}' has {key} = '{text}', which {problem}"
            else:
                values[key] = value
        sources, notes, texts = dict(chip.sources), dict(chip.notes), dict(chip.fields)
        for name, (inputs, compute, formula, _meaning) in DERIVED.items():
            if name in values or name in unknown:
                continue
            if missing := [i for i in inputs if i in unknown]:
                unknown[name] = (
                    f"derived from {' and '.join(missing)}, which {chip.name} does not have a usable value for"
                )
            elif all(i in values for i in inputs):
                derived = compute(values[inputs[0]], values[inputs[1]])
                if _finite_positive(derived):
                    values[name] = derived
                    sources[name] = f"derived: {formula}"
                else:
                    unknown[name] = (
                        f"{formula} cannot be computed for {chip.name} (the result is not a finite number above zero)"
                    )
        records[chip.name] = Record(chip.name, chip.title, values, sources, notes, chip.kind, texts, unknown)
    return records, problems


def _field_value(key: str, text: str) -> tuple[Quantity | None, str]:
    """A chip field's quantity, or None and what is wrong with it ("must be in byte/s")."""
    try:
        value = evaluate_constant(text)
    except Exception:  # noqa: BLE001 - a bug in the evaluator must not stop the catalog: the field is unusable
        value = None
    if value is None:
        return None, "is not a value with a unit"
    expected = FIELDS.get(key)
    if expected is not None and value.dim != expected[0] and not (value.free and value.dim == 0):
        return None, f"must be in {dimension.base_unit_name(expected[0]) or 'a plain number'}"
    if not isinstance(value.value, (int, float)):
        return None, "must be one value, not a sweep"
    if not math.isfinite(value.value):
        return None, "is not a finite number"
    if expected is None:
        return value, ""
    if value.value <= 0:  # derived fields and slices divide by these
        return None, "must be greater than zero"
    return Quantity(value.value, expected[0], False, value.label), ""


def _finite_positive(value: Quantity) -> bool:
    return isinstance(value.value, (int, float)) and math.isfinite(value.value) and value.value > 0
