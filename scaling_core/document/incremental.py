"""Incremental analysis: a region's results are reused when nothing it reads changed.

A region (calc block, code span, claim) depends only on its own text, the
problem it sits in, and the values of the names it mentions (a superset of
what it reads: every identifier in its text).  Its effects — values, checks,
diagnostics, definitions, references — are recorded relative to its start
and replayed, shifted, when a later analysis meets the same key.  So an edit
re-evaluates the changed regions and those whose inputs changed: exactly its
dependents.  Regions with ``import`` are always evaluated
(:attr:`Effects.replayable`); a claim or inline value that met an unknown
name is remembered as waiting (it may read a name defined below, see
``forward.py``).  Runs (a chunk's regions in one scope, ``driver.py``) are
kept the same way, keyed by their chunk and every name their regions read.
The cache keeps what the latest analysis used (a replayed run's regions
included), so it never grows past about twice one document.  The driver
(``driver.py``) asks the cache before it asks the interpreter to evaluate a region.

:class:`ChunkCache` does the same one level down, for the Markdown scan of
each chunk (see ``chunks.py``).  Moving reused results into place is
``shift.py``'s.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Mapping
from functools import lru_cache
from sys import intern
from typing import TYPE_CHECKING, Any

from scaling_core.diagnostics import Diagnostic
from scaling_core.document.effects import Effects, region_bounds
from scaling_core.document.piece_chunks import PieceScans
from scaling_core.document.regions import CalcRegion, ChunkScan, ClaimRegion, CodeSpanRegion, Region
from scaling_core.document.results import Binding
from scaling_core.document.scope import Scope
from scaling_core.document.shift import shift_regions, shift_scan
from scaling_core.expr.lexer import IDENTIFIER
from scaling_core.expr.values import BUDGET_SPENT, Budget, Record, ShapeValue
from scaling_core.units.arrays import is_array
from scaling_core.units.quantity import Quantity

if TYPE_CHECKING:
    from scaling_core.document.chunk_layout import ChunkLayout
    from scaling_core.document.stretches import Stretch

_IDENTIFIER = re.compile(IDENTIFIER)  # the lexer's own rule, so no name a region reads is missed


class ChunkCache:
    """Chunk scans of the previous version (keeps only what the latest extraction used).

    A chunk is looked up by its text's hash and confirmed against the text it was read in (kept by reference:
    the draft's own string, not a copy of each chunk, which doubled a long draft's text in memory).
    """

    def __init__(self, latex_math: bool = False) -> None:
        self.start_over(latex_math)

    def start_over(self, latex_math: bool) -> None:
        """Forget every scan: from now on chunks are scanned for LaTeX math or not (``latex_math``).

        A scan finds math only with the ``latex_math`` setting (``inline_scan.py``), so scans
        made the other way cannot be reused; :func:`extract.extract` starts over when it changes.
        """
        #: Whether its scans looked for LaTeX math.
        self.latex_math = latex_math
        #: Each chunk's scan, by the hash of its text: (the text it was read in, where it starts there, scan).
        self._entries: dict[int, tuple[str, int, ChunkScan]] = {}
        self._next: dict[int, tuple[str, int, ChunkScan]] = {}
        #: The last absolute placement of each chunk, by its key: (start, scan shifted there without its
        #: regions, the scan shifted).
        self._placed: dict[int, tuple[int, ChunkScan, ChunkScan]] = {}
        #: Regions placed in the latest extractions, by (scan, start): (scan, regions).
        self._regions: dict[tuple[int, int], tuple[ChunkScan, list[Region]]] = {}
        self._next_regions: dict[tuple[int, int], tuple[ChunkScan, list[Region]]] = {}
        self.parsed = 0
        self.reused = 0
        #: The scans parsed by the latest extraction (their chunks were just edited), by id.
        self.fresh: set[int] = set()
        #: The chunks of the latest extraction (``chunk_layout.py``): what the next one keeps of them.
        self.layout: ChunkLayout | None = None
        #: The scans of long calc blocks' pieces, walked as chunks (``piece_chunks.py``).
        self.pieces = PieceScans()

    def begin(self) -> None:
        """Start an extraction."""
        self._next = {}
        self.parsed = self.reused = 0
        self.fresh = set()
        self.pieces.begin()

    def end(self, *, keep_placed_regions: bool = True) -> None:
        """Keep only the chunks just used (and, unless told not to, the regions placed for them)."""
        self._entries, self._next = self._next, {}
        self.pieces.end()
        self.end_placements(keep_placed_regions)

    def abandon(self) -> None:
        """An extraction stopped part-way: keep the old chunks and the ones it scanned."""
        self._entries.update(self._next)
        self._next = {}
        self.pieces.abandon()
        self._regions.update(self._next_regions)
        self._next_regions = {}

    def get(self, chunk: str, text: str, start: int) -> ChunkScan | None:
        """A previous scan of a chunk with the same text as ``chunk`` (which starts at ``start`` in ``text``)."""
        key = hash(chunk)
        found = self._entries.get(key)
        if found is None or not found[0].startswith(chunk, found[1]):
            return None
        self._next[key] = (text, start, found[2])
        self.reused += 1
        return found[2]

    def keep(self, key: int, text: str, start: int, scan: ChunkScan) -> None:
        """Keep the scan of a chunk known unchanged (``chunk_layout.py``), by its key: reused, as :meth:`get`
        finds it."""
        self._next[key] = (text, start, scan)
        self.reused += 1

    def put(self, key: int, text: str, start: int, scan: ChunkScan) -> None:
        """Remember a fresh scan of the chunk of ``text`` at ``start`` (its key: the hash of its text)."""
        self._next[key] = (text, start, scan)
        self.fresh.add(id(scan))
        self.parsed += 1

    def placed(self, key: int, start: int, scan: ChunkScan) -> ChunkScan:
        """``scan`` (its chunk's key: ``key``) shifted to ``start`` without its regions, reusing the last placement
        when the chunk did not move.

        Regions are placed only when asked (:meth:`placed_regions`): most
        chunks' regions are replayed as a whole without being looked at.
        """
        previous = self._placed.get(key)
        if previous is not None and previous[0] == start and previous[2] is scan:
            return previous[1]
        shifted = shift_scan(scan, start, regions=False)
        self._placed[key] = (start, shifted, scan)
        return shifted

    def placed_regions(self, start: int, scan: ChunkScan) -> list[Region]:
        """The regions of ``scan`` in document offsets, for a chunk at ``start`` (reused while it stays there)."""
        key = (id(scan), start)
        found = self._regions.get(key) or self._next_regions.get(key)
        if found is None or found[0] is not scan:
            found = (scan, shift_regions(scan, start))
        self._next_regions[key] = found
        return found[1]

    def end_placements(self, keep_regions: bool = True) -> None:
        """Forget placements of chunks the latest extraction did not use (and all placed regions if not
        ``keep_regions``)."""
        self._placed = {key: self._placed[key] for key in self._entries if key in self._placed}
        placed, self._next_regions = self._next_regions, {}
        self._regions = placed if keep_regions else {}
        if not keep_regions:  # one chunk's regions at a time: all at once held the interpreter lock 45 ms (20 MB)
            while placed:
                placed.popitem()

    @property
    def placed_region_count(self) -> int:
        """How many placed regions are kept for the next analysis."""
        return sum(len(regions) for _scan, regions in self._regions.values())


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
        #: Runs (``driver.py``): the regions of a chunk in one scope, replayed as a whole.
        self._runs: dict[tuple[Any, ...], Any] = {}
        self._next_runs: dict[tuple[Any, ...], Any] = {}
        #: Stretches (``stretches.py``): consecutive runs replayed as one, by their first chunk's scan (its id).
        self._stretches: dict[int, Stretch] = {}
        self._next_stretches: dict[int, Stretch] = {}
        self._config: object = None
        self.evaluated = 0
        self.reused = 0
        #: Statements (values and checks) produced by the regions evaluated in the latest analysis.
        self.statements = 0
        #: Regions the latest analysis looked up one by one (not replayed with their run).
        self.walked = 0
        #: Runs looked up one by one (not replayed with a stretch, ``stretches.py``) in the latest analysis.
        self.runs = 0
        #: Claims and inline values that waited for names below, looked up or evaluated again (not
        #: replayed with their run) in the latest analysis (``forward.py``).
        self.resolved = 0
        #: The budget of the analysis under way: a region is replayed only if it still fits in it.
        self.budget: Budget | None = None
        #: Whether the analysis under way found no runs recorded (the first of its draft, or of new settings).
        self.first = True

    def begin(self, config: object) -> None:
        """Start an analysis; settings changes invalidate everything."""
        if config != self._config:
            self._entries = {}
            self._waiting = set()
            self._runs = {}
            self._stretches = {}
            self._config = config
        self._next = {}
        self._next_waiting = set()
        self._next_runs = {}
        self._next_stretches = {}
        self.evaluated = self.reused = self.statements = self.walked = self.resolved = self.runs = 0
        self.first = not self._runs
        self.chunks.begin()

    def end(self) -> None:
        """Keep the entries this analysis used (a replayed run's regions count as used: the walk of the
        run after an edit inside it needs them).

        Entries it did not use are dropped once they pass a quarter of the used
        ones (not every time: that would touch every region of every replayed
        run; measured: keeping up to 4,096 unused pieces of a long block being
        typed in held 130 MB).
        """
        live = len(self._next) + sum(len(run.entries) for run in self._next_runs.values())
        self._entries.update(self._next)
        if len(self._entries) > live + live // 4 + 64:
            for run in self._next_runs.values():
                self._next.update(run.entries)
            self._entries = self._next
        self._next = {}
        self._waiting, self._next_waiting = self._next_waiting, set()
        self._runs, self._next_runs = self._next_runs, {}
        self._stretches, self._next_stretches = self._next_stretches, {}
        # A first analysis placed every chunk's regions; the next one replays runs and walks only the chunks
        # around the edit, so keeping them would only free them in that keystroke (20 MB: 147k regions, 50 ms).
        self.chunks.end(keep_placed_regions=not self.first)

    def abandon(self) -> None:
        """An analysis stopped part-way: keep the old entries and the ones it made."""
        self._entries.update(self._next)
        self._next = {}
        self._waiting |= self._next_waiting
        self._next_waiting = set()
        self._runs.update(self._next_runs)
        self._next_runs = {}
        self._stretches.update(self._next_stretches)
        self._next_stretches = {}
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
        if found is not None and found.elements and self.budget is not None and self.budget.room(found.elements):
            return None  # evaluated again, it would now run out of sweep elements, as a full analysis does
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

    def get_run(self, key: tuple[Any, ...], scan: ChunkScan) -> Any:
        """The recorded run (``effects.Run``) for ``key``, if any and still of ``scan`` (and keep it)."""
        self.runs += 1
        found = self._runs.get(key) or self._next_runs.get(key)
        if found is None or found.scan is not scan:
            return None
        if found.elements and self.budget is not None and self.budget.room(found.elements):
            return None  # as for a region (:meth:`get`): walked again, as a full analysis walks it
        self._next_runs[key] = found
        self.reused += found.counted
        return found

    def put_run(self, key: tuple[Any, ...], run: Any) -> None:
        """Record a run just walked."""
        self._next_runs[key] = run

    def stretch(self, scan: ChunkScan) -> Stretch | None:
        """The stretch that starts with the chunk of ``scan``, if any (the caller checks that it holds)."""
        return self._stretches.get(id(scan))

    def keep_stretch(self, stretch: Stretch) -> None:
        """A stretch was replayed whole: keep it and its runs, and count its regions as reused."""
        self._next_stretches[id(stretch.scans[0])] = stretch
        self._next_runs.update(stretch.keyed)
        self.reused += stretch.counted

    def keep_runs(self, stretch: Stretch, count: int) -> None:
        """The first ``count`` chunks of a stretch were replayed: keep their runs, and count their regions."""
        for key, run in zip(stretch.keys[:count], stretch.runs[:count]):
            if key is not None:
                self._next_runs[key] = run
                self.reused += run.counted

    def put_stretch(self, stretch: Stretch) -> None:
        """Record a stretch just formed (its runs are kept already)."""
        self._next_stretches[id(stretch.scans[0])] = stretch

    def stretches_made(self) -> list[Stretch]:
        """The stretches the analysis under way formed or replayed so far."""
        return list(self._next_stretches.values())

    def put(self, key: tuple[Any, ...], effects: Effects) -> None:
        """Record a freshly evaluated region's effects, unless they may not be replayed (:attr:`Effects.replayable`,
        or a bug or a spent budget stopped it: evaluated again, it may well go further)."""
        if not effects.replayable or any(_incomplete(d) for d in effects.diagnostics):
            return
        self._next[key] = effects
        self.evaluated += 1
        self.statements += len(effects.values) + len(effects.checks)


def _incomplete(diagnostic: Diagnostic) -> bool:
    return diagnostic.code == "E999" or (diagnostic.code == "E003" and diagnostic.message.startswith(BUDGET_SPENT))


def fingerprint(value: object) -> object:
    """A hashable stand-in for a value: equal fingerprints mean equal values.

    A quantity whose magnitude is a float other than zero and NaN is stood for by that float itself (equal such
    floats are the same number), with no tag: its tuple is the only one to start with a number, and keeping
    the float shared saves a copy of its bytes (~56 bytes a definition, ~4 MB of a 20 MB draft's analysis);
    with no inference and no label, a pair of it and the dimension.
    Zeros (``0.0`` and ``-0.0`` are equal floats but not the same value), NaN, other numbers and arrays are
    stood for by their bytes.
    """
    if value is None:
        return None
    if isinstance(value, Quantity):
        magnitude = value.value
        if type(magnitude) is float and magnitude and magnitude == magnitude:
            if not value.free and value.label is None:  # most: a pair (16 bytes less a definition)
                return (magnitude, value.dim)
            return (magnitude, value.dim, value.free, value.label)
        raw = magnitude.tobytes() if is_array(magnitude) else struct.pack("d", magnitude)
        return ("q", raw, value.dim, value.free, value.label)
    if isinstance(value, Record):
        return ("record", value.name, id(value))
    if isinstance(value, ShapeValue):
        return ("shape", value.dtype, value.dims)
    return ("other", id(value))


def identifiers(text: str) -> tuple[str, ...]:
    """Every identifier in ``text``, in order, without repeats (memoised for short texts: regions repeat).

    A long text (a whole block being typed in) is not memoised: every
    version typed would stay in memory (measured: ~0.5 MB a keystroke in a
    5,000-statement block).  Short texts (regions) and medium ones (pieces
    of long blocks, ``pieces.py``) are, in memos of bounded size: at most
    16 MB and 1 MB of text.  Few medium texts are read again: an unchanged
    piece is replayed with its run, whose names are kept on its chunk's scan;
    the memo held mostly versions of the piece being typed in (512 of them:
    RSS grew ~5 MB over the first 1,000 keystrokes in a long block, for no
    measurable speed).
    """
    if len(text) <= 1024:
        return _short_text(text)[1]
    if len(text) <= 16384:
        return _medium_identifiers(text)
    return _names_in(text)


def read_once(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` as first read (the string the memo of :func:`identifiers` holds, if it holds it) and its
    identifiers: a region's cache key keeps that string, not a second copy of the region's text (the driver
    reads a region's names and makes its key from two slices of the draft; ~3% of a long draft's analysis)."""
    return _short_text(text) if len(text) <= 1024 else (text, identifiers(text))


def _names_in(text: str) -> tuple[str, ...]:
    """The identifiers of ``text`` in order, without repeats, each interned: a name read in many regions is then
    one string, not a copy per region (4% of a long draft's analysis and cache)."""
    return tuple(dict.fromkeys(map(intern, _IDENTIFIER.findall(text))))


@lru_cache(maxsize=16384)
def _short_text(text: str) -> tuple[str, tuple[str, ...]]:
    return text, _names_in(text)


_medium_identifiers = lru_cache(maxsize=64)(_names_in)


def region_key(region: Region, text: str, scope: Scope) -> tuple[Any, ...]:
    """The cache key of ``region`` of the draft ``text``, evaluated in ``scope`` as it is now: flat, what the
    region is read from, then what its names mean (a tuple of their own took ~64 bytes a region).

    It holds the region's text (from its start to its end: ``effects.region_bounds``), or a calc block's lines
    as written (the string the block holds, not a copy: ``CalcRegion.content``) and where they lie in it, or a
    code span's text (the string the code span holds), where it lies and how long the code span is, which is
    all their evaluation reads (not the backticks around a code span's text).  A claim's expression is read
    from its comment with the paragraph's code spans masked, which depends on backticks outside its text: the
    key holds that expression as it is evaluated.
    """
    local = scope.local
    before: list[Any]
    if type(region) is CalcRegion and type(region.content) is str:
        start, end = region.span
        source, names = read_once(region.content)
        before = [CalcRegion, source, region.first - start, end - start, region.hidden]
    elif type(region) is CodeSpanRegion:
        source, names = read_once(region.text)
        before = [CodeSpanRegion, source, region.content_offset, region.length, region.role]
    else:
        start, end = region_bounds(region)
        source, names = read_once(text[start:end])
        before = [ClaimRegion, source, region.expr_text] if type(region) is ClaimRegion else [type(region), source]
    before += (scope.problem, local is not None)
    return inputs_for(names, local, scope.top_level, scope.records, before)


def inputs_for(
    mentioned: tuple[str, ...],
    local: dict[str, Binding] | None,
    top: dict[str, Binding],
    records: Mapping[str, Record],
    before: list[Any] | None = None,
) -> tuple[Any, ...]:
    """What each name in ``mentioned`` means now, flat: its stamp (the fingerprint of its value) and whether it is
    defined in this scope, for each name in turn (``(stamp, defined, stamp, defined, ...)``; see :func:`entries`),
    after the items of ``before``, if given.

    Part of a region's (and a run's) cache key; it runs for every one on every edit, hence written out flat.  The
    names are not in it: a key holds what they are read from (a region's text, a run's chunk).  Flat, it takes
    16 bytes a name: a tuple per name took 80 (~30 MB of a 20 MB draft's analysis).
    """
    scope = local if local is not None else top
    found: list[Any] = before if before is not None else []
    append = found.append
    for name in mentioned:
        binding = (local.get(name) if local is not None else None) or top.get(name)
        if binding is not None:
            append(binding.fingerprint if binding.fingerprint is not None else fingerprint(binding.value))
        else:
            record = records.get(name)  # tagged apart from a binding's stamp: which one a name is shows in its stamp
            append(None if record is None else ("chip", name, id(record)))
        append(name in scope)
    return tuple(found)


def entries(mentioned: tuple[str, ...], inputs: tuple[Any, ...]) -> Iterator[tuple[str, Any, bool]]:
    """Each name of ``mentioned`` with its stamp and whether it was defined in its scope, from
    :func:`inputs_for`'s ``inputs`` for them."""
    return zip(mentioned, inputs[0::2], inputs[1::2])
