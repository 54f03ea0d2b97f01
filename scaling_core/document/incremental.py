"""Incremental analysis: a region's results are reused when nothing it reads changed.

A region (calc block, code span, claim) depends only on its own text, the
problem it sits in, and the values of the names it mentions (a superset of
what it reads: every identifier in its text).  Its effects — values, checks,
diagnostics, definitions, references — are recorded relative to its start
and replayed, shifted, when a later analysis meets the same key.  So an edit
re-evaluates the changed regions and those whose inputs changed: exactly its
dependents.  Regions with ``import`` are always evaluated.  The cache keeps
only what the latest analysis used, so it never grows past one document.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, TypeVar

from scaling_core.diagnostics import Diagnostic, Fix, Related
from scaling_core.document.results import Binding, CheckResult, Reference, ValueResult
from scaling_core.expr.evaluator import ShapeValue
from scaling_core.expr.lexer import IDENTIFIER
from scaling_core.hardware.catalog import Record
from scaling_core.text import Span
from scaling_core.units.arrays import is_array
from scaling_core.units.quantity import Quantity

_IDENTIFIER = re.compile(IDENTIFIER)  # the lexer's own rule, so no name a region reads is missed


@dataclass(frozen=True)
class Effects:
    """What evaluating one region added, and where the region started."""

    start: int
    diagnostics: tuple[Diagnostic, ...]
    values: tuple[ValueResult, ...]
    checks: tuple[CheckResult, ...]
    bindings: tuple[Binding, ...]
    references: tuple[Reference, ...]
    #: For each reference, the index of the region's own binding it resolved to, or None if outside.
    owners: tuple[int | None, ...] = ()


class RegionCache:
    """Region results of the previous analysis of one document (owned by the caller)."""

    def __init__(self) -> None:
        from scaling_core.document.chunks import ChunkCache

        #: Markdown chunk scans, reused across versions too.
        self.chunks = ChunkCache()
        self._entries: dict[tuple[Any, ...], Effects] = {}
        self._next: dict[tuple[Any, ...], Effects] = {}
        self._config: object = None
        self.evaluated = 0
        self.reused = 0
        #: Statements (values and checks) produced by the regions evaluated in the latest analysis.
        self.statements = 0

    def begin(self, config: object) -> None:
        """Start an analysis; settings changes invalidate everything."""
        if config != self._config:
            self._entries = {}
            self._config = config
        self._next = {}
        self.evaluated = self.reused = self.statements = 0
        self.chunks.begin()

    def end(self) -> None:
        """Keep only the entries this analysis used."""
        self._entries, self._next = self._next, {}
        self.chunks.end()

    def abandon(self) -> None:
        """An analysis stopped part-way: keep the old entries and the ones it made."""
        self._entries.update(self._next)
        self._next = {}
        self.chunks.abandon()

    def get(self, key: tuple[Any, ...]) -> Effects | None:
        """The recorded effects for ``key``, if any (and keep them).

        Regions evaluated earlier in this same analysis count too: a draft
        repeats code spans such as `1.97e14` or `1.97e14 / 8.2e11 = 240`.
        """
        found = self._entries.get(key)
        if found is not None:
            self._next[key] = found
        else:
            found = self._next.get(key)
        if found is not None:
            self.reused += 1
        return found

    def put(self, key: tuple[Any, ...], effects: Effects) -> None:
        """Record a freshly evaluated region."""
        self._next[key] = effects
        self.evaluated += 1
        self.statements += len(effects.values) + len(effects.checks)


def fingerprint(value: object) -> object:
    """A hashable stand-in for a value: equal fingerprints mean equal values."""
    if value is None:
        return None
    if isinstance(value, Quantity):
        magnitude = value.value
        raw = magnitude.tobytes() if is_array(magnitude) else struct.pack("d", magnitude)
        return ("q", raw, value.dim, value.free, value.label)
    if isinstance(value, Record):
        return ("record", value.name, id(value))
    if isinstance(value, ShapeValue):
        return ("shape", value.dtype, value.dims)
    return ("other", id(value))


@lru_cache(maxsize=65536)
def identifiers(text: str) -> tuple[str, ...]:
    """Every identifier in ``text``, in order, without repeats (memoised: regions repeat)."""
    return tuple(dict.fromkeys(_IDENTIFIER.findall(text)))


def inputs_of(text: str, local: dict[str, Binding] | None, top: dict[str, Binding], records: Mapping[str, Record]) -> tuple:
    """What each name ``text`` mentions means now: (name, fingerprint of its value, defined in this scope).

    Part of a region's cache key; it runs for every region on every edit, hence written out flat.
    """
    scope = local if local is not None else top
    names = []
    for name in identifiers(text):
        binding = (local.get(name) if local is not None else None) or top.get(name)
        if binding is not None:
            stamp = binding.fingerprint if binding.fingerprint is not None else fingerprint(binding.value)
        else:
            record = records.get(name)
            stamp = None if record is None else ("record", name, id(record))
        names.append((name, stamp, name in scope))
    return tuple(names)


_T = TypeVar("_T")
_new_span = tuple.__new__  # Span construction without NamedTuple's Python-level __new__ (hot path)
_set = object.__setattr__


def shift_span(span: Span, delta: int) -> Span:
    """``span`` moved by ``delta``."""
    return _new_span(Span, (span[0] + delta, span[1] + delta))


def moved(item: _T, **changes: object) -> _T:
    """``dataclasses.replace`` for our frozen dataclasses, without re-running ``__init__``.

    Shifting every result after the edit point is the hot path of a keystroke
    (measured: ``dataclasses.replace`` took ~60% of re-analysing 10,000 lines
    after typing near the top); a shallow copy with some fields changed is ~4x
    cheaper.  Only for moving spans, which keeps every field's invariant.
    """
    new = object.__new__(type(item))
    state = getattr(item, "__dict__", None)
    if state is not None:
        fields = state.copy()
        fields.update(changes)
        _set(new, "__dict__", fields)
        return new
    for name in type(item).__slots__:  # type: ignore[attr-defined]
        object.__setattr__(new, name, changes[name] if name in changes else object.__getattribute__(item, name))
    return new


def shift_diagnostic(item: Diagnostic, delta: int) -> Diagnostic:
    """A diagnostic with every span moved by ``delta``."""
    return moved(
        item,
        span=shift_span(item.span, delta),
        related=tuple(Related(shift_span(r.span, delta), r.message) for r in item.related) if item.related else (),
        fixes=tuple(Fix(f.title, shift_span(f.span, delta), f.text) for f in item.fixes) if item.fixes else (),
    )


def move_value(delta: int, value: ValueResult) -> ValueResult:
    """A replayed value moved by ``delta`` (its tree keeps its spans; ``shift`` records how far)."""
    return moved(value, span=shift_span(value.span, delta), shift=value.shift + delta)


def move_reference(delta: int, recorded: tuple[Reference, Binding | None]) -> Reference:
    """A replayed reference moved by ``delta``, pointing at the binding it resolves to now."""
    reference, binding = recorded
    return Reference(shift_span(reference.span, delta), reference.name, binding)


def move_check(delta: int, check: CheckResult) -> CheckResult:
    """A replayed check moved by ``delta``."""
    return moved(check, span=shift_span(check.span, delta))


def move_binding(delta: int, binding: Binding) -> Binding:
    """A replayed definition moved by ``delta``."""
    return moved(binding, span=shift_span(binding.span, delta))


def shift_tree(node: Any, delta: int) -> Any:
    """A syntax tree with every span moved by ``delta`` (for derivations of reused values)."""
    if delta == 0 or node is None:
        return node
    if isinstance(node, Span):  # before tuple: a Span is a tuple
        return shift_span(node, delta)
    if isinstance(node, tuple):
        return tuple(shift_tree(item, delta) for item in node)
    if not hasattr(node, "__dataclass_fields__"):
        return node
    changes = {name: shift_tree(getattr(node, name), delta) for name in node.__dataclass_fields__}
    return replace(node, **changes)
