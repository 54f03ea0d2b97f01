"""Hardware records and the packaged catalog (``hardware/data/chips.toml``).

A record is a named set of fields, each a quantity written in the calc
language itself (``"989.4 TFLOP/s"``), so the data file doubles as a test of
the parser.  Every field cites a source URL.  The catalog grows in the
hardware issue; this module is its only reader.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from scaling_core.units.quantity import Quantity


@dataclass(frozen=True)
class Record:
    """A named record with quantity fields (a chip)."""

    name: str
    title: str
    fields: dict[str, Quantity]
    sources: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RawChip:
    """A chip as written in the data file: field texts still unparsed."""

    name: str
    title: str
    fields: dict[str, str]
    sources: dict[str, str]
    notes: dict[str, str]


def raw_catalog() -> list[RawChip]:
    """The packaged chips, unparsed."""
    raw = resources.files("scaling_core.hardware").joinpath("data/chips.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    return [raw_chip(name, entry) for name, entry in data["chip"].items()]


def raw_chip(name: str, entry: dict) -> RawChip:
    """Read one ``[chip.NAME]`` table (packaged or from a project config)."""
    fields = {k: v["value"] for k, v in entry.get("fields", {}).items()}
    sources = {k: v.get("source", "") for k, v in entry.get("fields", {}).items()}
    notes = {k: v["note"] for k, v in entry.get("fields", {}).items() if "note" in v}
    return RawChip(name, entry.get("title", name), fields, sources, notes)


@lru_cache(maxsize=1)
def _packaged_texts() -> tuple[RawChip, ...]:
    return tuple(raw_catalog())


def build_records(
    chips: tuple[RawChip, ...], evaluate_text: Callable[[str], Quantity | None]
) -> dict[str, Record]:
    """Evaluate every field text into a quantity; unparsable fields are skipped."""
    records: dict[str, Record] = {}
    for chip in chips:
        values: dict[str, Quantity] = {}
        for key, text in chip.fields.items():
            value = evaluate_text(text)
            if value is not None:
                values[key] = value
        records[chip.name] = Record(chip.name, chip.title, values, chip.sources, chip.notes)
    return records


def packaged_chips() -> tuple[RawChip, ...]:
    """The packaged chip texts (cached; immutable)."""
    return _packaged_texts()
