"""Completion and signature help for calc text."""

from __future__ import annotations

import re

from scaling_core.document.results import DocumentAnalysis
from scaling_core.expr.functions import FUNCTIONS
from scaling_core.expr.values import Record
from scaling_core.formulas import LIBRARY
from scaling_core.hardware.catalog import FIELDS
from scaling_core.queries.completion import Completion, name_completions
from scaling_core.records import record
from scaling_core.units.display import format_quantity
from scaling_core.units.registry import default_registry
from scaling_core.xla_calls import DOCS as TRUSTED_DOCS
from scaling_core.xla_calls import SIGNATURES

_FIELD_PREFIX = re.compile(r"([^\W\d]\w*)\.(\w*)\Z")
_WORD_PREFIX = re.compile(r"(\d\s?)?(\w*)\Z")
_SHAPE_FIELDS = ("bytes", "size", "bits")
COMMON_UNITS = ("s", "ms", "us", "ns", "min", "h", "days", "byte", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB",
                "FLOP", "FLOP/s", "byte/s", "GB/s", "TB/s", "USD", "USD/h", "token", "param", "chip")  # fmt: skip


@record
class Signature:
    """Signature help: the call's signature, its documentation and the active parameter."""

    label: str
    documentation: str
    parameters: tuple[str, ...]
    active: int


def completions(analysis: DocumentAnalysis, offset: int, limit: int | None = None) -> list[Completion]:
    """What may be typed at ``offset``: fields after ``chip.``, units after a number, else names
    (``completion.py``).  With ``limit``, at most ``limit + 1`` names: more than ``limit`` says the list is cut.
    """
    before = analysis.text[analysis.index.line_start_at(offset) : offset]
    field = _FIELD_PREFIX.search(before)
    if field is not None:
        record = analysis.records.get(field.group(1))
        if isinstance(record, Record):
            return [Completion(name, "field", format_quantity(value, 4), record.sources.get(name, ""))
                    for name, value in record.fields.items()]  # fmt: skip
        return [Completion(name, "field", "shape field") for name in _SHAPE_FIELDS]
    word = _WORD_PREFIX.search(before)
    if word is not None and word.group(1):
        registry = default_registry()
        return [Completion(unit, "unit", "unit") for unit in COMMON_UNITS if unit.startswith(word.group(2))] + [
            Completion(s, "unit", "unit") for s in registry.spellings()
            if s.startswith(word.group(2)) and word.group(2) and s not in COMMON_UNITS
        ][:50]  # fmt: skip
    return name_completions(analysis, offset, word.group(2) if word else "", limit)


def signature_at(analysis: DocumentAnalysis, offset: int) -> Signature | None:
    """The innermost call open at ``offset`` on its line, with the active argument."""
    before = analysis.text[analysis.index.line_start_at(offset) : offset]
    depth = 0
    commas = 0
    for position in range(len(before) - 1, -1, -1):
        char = before[position]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth == 0:
                if char == "[":
                    return None
                name = re.search(r"([^\W\d]\w*)\Z", before[:position])
                return _signature(name.group(1), commas) if name else None
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
    return None


def _signature(name: str, active: int) -> Signature | None:
    if name in LIBRARY:
        formula = LIBRARY[name]
        params = tuple(f"{p.name}: {p.unit or 'count'}" for p in formula.params)
        return Signature(formula.signature, f"{formula.doc}\n\n{formula.source}", params, active)
    if name in FUNCTIONS:
        low, high, doc, _impl = FUNCTIONS[name]
        params = tuple(f"x{i + 1}" for i in range(max(low, 1) if high is None else high))
        return Signature(f"{name}({', '.join(params)}{', …' if high is None else ''})", doc, params, active)
    if name in TRUSTED_DOCS:
        return Signature(SIGNATURES[name], TRUSTED_DOCS[name], ("f", "shapes…"), min(active, 1))
    return None


def field_documentation(name: str) -> str:
    """What a chip field means (for hover on ``h100.hbm_bw``)."""
    return FIELDS[name][1] if name in FIELDS else ""
