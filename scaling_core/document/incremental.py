"""Incremental analysis: a region's results are reused when nothing it reads changed.

A region (calc block, code span, claim) depends only on its own text, the
problem it sits in, and the values of the names it mentions (a superset of
what it reads: every identifier in its text).  Its effects — values, checks,
diagnostics, definitions, references — are recorded relative to its start
and replayed, shifted, when a later analysis meets the same key.  So an edit
re-evaluates the changed regions and those whose inputs changed: exactly its
dependents.  Regions with ``import`` or an unknown name are always evaluated
(:attr:`Effects.replayable`); a claim or inline value that met an unknown
name is remembered as waiting (it may read a name defined below, see
``forward.py``).  The cache keeps only what the latest analysis
used, so it never grows past one document.  The driver (``analysis.py``)
asks the cache before it asks the interpreter to evaluate a region.

:class:`ChunkCache` does the same one level down, for the Markdown scan of
each chunk (see ``chunks.py``).  Moving reused results into place is
``shift.py``'s.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from scaling_core.document.effects import Effects
from scaling_core.document.regions import ChunkScan, Region
from scaling_core.document.results import Binding
from scaling_core.document.scope import Scope
from scaling_core.document.shift import shift_scan
from scaling_core.expr.lexer import IDENTIFIER
from scaling_core.expr.values import Record, ShapeValue
from scaling_core.units.arrays import is_array
from scaling_core.units.quantity import Quantity

_IDENTIFIER = re.compile(IDENTIFIER)  # the lexer's own rule, so no name a region reads is missed


class ChunkCache:
    """Chunk scans of the previous version (keeps only what the latest extraction used)."""

    def __init__(self) -> None:
        self._entries: dict[str, ChunkScan] = {}
        self._next: dict[str, ChunkScan] = {}
        #: The last absolute placement of each chunk: (start, scan shifted there).
        self._placed: dict[str, tuple[int, ChunkScan]] = {}
        self.parsed = 0
        self.reused = 0

    def begin(self) -> None:
        """Start an extraction."""
        self._next = {}
        self.parsed = self.reused = 0

    def end(self) -> None:
        """Keep only the chunks just used."""
        self._entries, self._next = self._next, {}
        self.end_placements()

    def abandon(self) -> None:
        """An extraction stopped part-way: keep the old chunks and the ones it scanned."""
        self._entries.update(self._next)
        self._next = {}

    def get(self, chunk: str) -> ChunkScan | None:
        """A previous scan of an identical chunk."""
        found = self._entries.get(chunk)
        if found is not None:
            self._next[chunk] = found
            self.reused += 1
        return found

    def put(self, chunk: str, scan: ChunkScan) -> None:
        """Remember a fresh scan."""
        self._next[chunk] = scan
        self.parsed += 1

    def placed(self, chunk: str, start: int, scan: ChunkScan) -> ChunkScan:
        """``scan`` shifted to ``start``, reusing the last placement when the chunk did not move."""
        previous = self._placed.get(chunk)
        if previous is not None and previous[0] == start:
            return previous[1]
        shifted = shift_scan(scan, start)
        self._placed[chunk] = (start, shifted)
        return shifted

    def end_placements(self) -> None:
        """Forget placements of chunks the latest extraction did not use."""
        self._placed = {chunk: self._placed[chunk] for chunk in self._entries if chunk in self._placed}


class RegionCache:
    """Region results of the previous analysis of one document (owned by the caller)."""

    def __init__(self) -> None:
        #: Markdown chunk scans, reused across versions too.
        self.chunks = ChunkCache()
        self._entries: dict[tuple[Any, ...], Effects] = {}
        self._next: dict[tuple[Any, ...], Effects] = {}
        #: Keys of claims and inline values that met an unknown name where they stand (see ``forward.py``).
        self._waiting: set[tuple[Any, ...]] = set()
        self._next_waiting: set[tuple[Any, ...]] = set()
        self._config: object = None
        self.evaluated = 0
        self.reused = 0
        #: Statements (values and checks) produced by the regions evaluated in the latest analysis.
        self.statements = 0

    def begin(self, config: object) -> None:
        """Start an analysis; settings changes invalidate everything."""
        if config != self._config:
            self._entries = {}
            self._waiting = set()
            self._config = config
        self._next = {}
        self._next_waiting = set()
        self.evaluated = self.reused = self.statements = 0
        self.chunks.begin()

    def end(self) -> None:
        """Keep only the entries this analysis used."""
        self._entries, self._next = self._next, {}
        self._waiting, self._next_waiting = self._next_waiting, set()
        self.chunks.end()

    def abandon(self) -> None:
        """An analysis stopped part-way: keep the old entries and the ones it made."""
        self._entries.update(self._next)
        self._next = {}
        self._waiting |= self._next_waiting
        self._next_waiting = set()
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

    def waiting(self, key: tuple[Any, ...]) -> bool:
        """Whether the region of ``key`` met an unknown name with these inputs before (and so waits again)."""
        if key in self._waiting or key in self._next_waiting:
            self._next_waiting.add(key)
            self.reused += 1
            return True
        return False

    def mark_waiting(self, key: tuple[Any, ...]) -> None:
        """Remember that the region of ``key`` met an unknown name with these inputs."""
        self._next_waiting.add(key)

    def put(self, key: tuple[Any, ...], effects: Effects) -> None:
        """Record a freshly evaluated region's effects, unless they may not be replayed (:attr:`Effects.replayable`)."""
        if not effects.replayable:
            return
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


def region_key(region: Region, source: str, scope: Scope) -> tuple[Any, ...]:
    """The cache key of ``region``, whose text is ``source``, evaluated in ``scope`` as it is now."""
    local = scope.local
    return (
        type(region),
        source,
        scope.problem,
        local is not None,
        inputs_of(source, local, scope.top_level, scope.records),
    )


def inputs_of(
    text: str, local: dict[str, Binding] | None, top: dict[str, Binding], records: Mapping[str, Record]
) -> tuple[Any, ...]:
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
