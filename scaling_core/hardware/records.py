"""Chip records as the calc language sees them: the packaged catalog plus the project's chips.

Fields are read as calc-language constants (see ``catalog.build_records``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from scaling_core.config import Config
from scaling_core.expr.values import Record
from scaling_core.hardware.catalog import RawChip, build_records, merge, packaged_chips, raw_chip
from scaling_core.hardware.slices import with_slices


@lru_cache(maxsize=1)
def packaged_records() -> dict[str, Record]:
    """The packaged chips as records (built once; records are immutable)."""
    records, problems = build_records(packaged_chips())
    if problems:
        raise RuntimeError(f"packaged hardware data is invalid: {problems}")
    return with_slices(records)


def _config_chips(config: Config) -> tuple[list[RawChip], list[str]]:
    chips, problems = [], []
    for name, entry in config.chips.items():
        chip, found = raw_chip(name, entry)
        problems += found
        if chip is not None:
            chips.append(chip)
    return chips, problems


def hardware_records(config: Config) -> dict[str, Record]:
    """The packaged chips plus the project's own (which add chips or override fields)."""
    if not config.chips:
        return packaged_records()
    chips, _problems = _config_chips(config)
    records, _problems = build_records(merge(packaged_chips(), chips))
    return {name: _guarded(record) for name, record in with_slices(records).items()}


#: Chip fields every slice is computed from (``hardware/slices.py``); the others are carried when present.
_SLICE_INPUTS = ("ici_bw_oneway", "ici_links", "ici_egress_oneway")


def _guarded(record: Record) -> Record:
    """A chip whose project fields are not all usable: its slices say so (untested, T003) rather than fail."""
    slicer = record.slicer
    if slicer is None or not record.unknown:
        return record
    blocking = [field for field in _SLICE_INPUTS if field in record.unknown]

    def guarded(key: str) -> Record | str:
        if blocking:
            why = "; ".join(record.unknown[field] for field in blocking)
            return Record(f'{record.name}["{key}"]', record.title, {}, unknown={"": why})
        found = slicer(key)
        return replace(found, unknown={**record.unknown, **found.unknown}) if isinstance(found, Record) else found

    return replace(record, slicer=guarded)


def chip_problems(config: Config) -> list[str]:
    """What is wrong with the project's chip tables (reported as configuration errors)."""
    chips, problems = _config_chips(config)
    _records, found = build_records(tuple(chips))
    return problems + found
