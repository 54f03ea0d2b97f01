"""Indexes an editor's queries read an analysis through: what holds an offset, what a name means there.

Hover, inlay hints, completion and go-to-definition each ask one question
about one analysis, many times while the author reads: the value or check at
the cursor, the definitions visible there.  Scanning every value, check and
definition per question cost ~10-50 ms on a 10,000-line draft (a 5,000-statement
block: 4,000 definitions, 8,000 references), past the editor's 10 ms.  Each
index here is built once per analysis (kept in ``DocumentAnalysis.lookups``)
and answers in O(log n) plus what it returns, with the same answer the scan gave.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from scaling_core.document.results import Binding, CheckResult, DocumentAnalysis, Reference, ValueResult
from scaling_core.document.segments import BOUNDS_STEP, Segments, known_bounds, moved
from scaling_core.document.sorted_on_read import SortedOnRead

#: Spans longer than this are few (a whole problem, a long block's value): they are scanned, not indexed.
WIDE = 4096
#: Small replayed regions are joined into one block up to this many items (a stretch alone may hold up to
#: :data:`BOUNDS_STEP`).
JOINED_AT_MOST = 64


class _Spanned(Protocol):
    """What the indexes hold (values, checks, definitions): where each starts and ends, read without making
    its span."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


_T = TypeVar("_T", bound=_Spanned)


class _SortedSpans(Generic[_T]):
    """Some items (in their list's order) by where their spans start and end."""

    __slots__ = ("items", "_starts", "_by_start", "_ends", "_by_end", "_wide")

    def __init__(self, items: list[_T]) -> None:
        self.items = items
        starts = [item.start for item in items]
        ends = [item.end for item in items]
        narrow = [n for n, (start, end) in enumerate(zip(starts, ends)) if end - start <= WIDE]
        self._wide = [n for n, (start, end) in enumerate(zip(starts, ends)) if end - start > WIDE]
        # Sorting keys read from lists (a method written in C, not a Python function per item): ~3x faster.
        self._by_start = sorted(narrow, key=starts.__getitem__)
        self._starts = [starts[n] for n in self._by_start]
        self._by_end = sorted(range(len(ends)), key=ends.__getitem__)
        self._ends = [ends[n] for n in self._by_end]

    def holding(self, offset: int) -> list[_T]:
        """The items whose spans hold ``offset`` (end included), in list order."""
        items = self.items
        low = bisect.bisect_left(self._starts, offset - WIDE)
        high = bisect.bisect_right(self._starts, offset)
        found = [n for n in self._by_start[low:high] if items[n].end >= offset]
        found += [n for n in self._wide if items[n].start <= offset <= items[n].end]
        return [items[n] for n in sorted(found)]

    def starting_between(self, low: int, high: int) -> list[_T]:
        """The items whose spans start in ``[low, high)``, in list order."""
        items = self.items
        found = self._by_start[bisect.bisect_left(self._starts, low) : bisect.bisect_left(self._starts, high)]
        found += [n for n in self._wide if low <= items[n].start < high]
        return [items[n] for n in sorted(found)]

    def ending_between(self, start: int, end: int) -> list[_T]:
        """The items whose spans end in ``[start, end]``, in list order."""
        low = bisect.bisect_left(self._ends, start)
        high = bisect.bisect_right(self._ends, end)
        return [self.items[n] for n in sorted(self._by_end[low:high])]


#: Consecutive items of a list, or of a :class:`Segments`'s part still as recorded: (the list or the recorded
#: items, the first, the end, and how to move one into place, ``move(delta, item)``, or None for ready items,
#: and the part's delta).
_Stretch = tuple[Sequence[Any], int, int, Callable[[int, Any], Any] | None, int]


class _Block(Generic[_T]):
    """Up to :data:`BOUNDS_STEP` consecutive items, the recorded ones moved into place when first asked about."""

    __slots__ = ("stretches", "_sorted")

    def __init__(self, stretches: list[_Stretch]) -> None:
        self.stretches = stretches
        self._sorted: _SortedSpans[_T] | None = None

    def spans(self) -> _SortedSpans[_T]:
        """Its items by span, moved into place on the first call (here, not in the Segments: a few of its items)."""
        found = self._sorted
        if found is None:
            items: list[_T] = []
            for sequence, first, end, move, delta in self.stretches:
                items += (
                    sequence[first:end] if move is None else map(move, itertools.repeat(delta), sequence[first:end])
                )
            found = self._sorted = _SortedSpans(items)
        return found


class SpanIndex(Generic[_T]):
    """Items (in their sequence's order) by where their spans start and end.

    Built a block at a time: the items are cut into blocks of consecutive
    items whose bounds (earliest start, latest end) are known, and a block is
    sorted (and, for a :class:`Segments` part kept as recorded, moved into
    place) only when a question is about a place inside its bounds.  After a
    keystroke near the top of a 10,000-line draft, most of the analysis is
    replayed parts not yet moved: an inlay hint or a hover moves the few blocks
    on screen, not the whole list (measured: 3-13 ms of indexing, 110 ms on
    30,000 checks, per new version before).  A :class:`SortedOnRead` sequence is
    indexed through what it sorts, its answers sorted as it would sort them.
    """

    __slots__ = ("_blocks", "_least", "_most", "_reach", "_in_order", "_sort")

    def __init__(self, items: Sequence[_T]) -> None:
        self._sort = False
        # ``type(...) is``, not ``isinstance``: compiled (mypyc), these classes share the ABC cache of
        # ``Sequence``, so that once a list has been seen to be a ``Sequence`` it passes for one of them too.
        if type(items) is SortedOnRead:
            items, ready = items.contents()
            self._sort = not ready
        blocks, least, most = _blocks(items)
        self._blocks, self._least, self._most = blocks, least, most
        #: The latest end of each block and all before it (never decreasing: bisected).
        self._reach = list(itertools.accumulate(most, max))
        self._in_order = all(a <= b for a, b in zip(least, least[1:]))

    def prepare(self, go_on: Callable[[], bool] | None = None) -> bool:
        """Sort (and move into place) every block now, so that no later question waits for one; ``go_on`` is
        asked before each block (a few ms at most): False once it says no, the rest left for later questions."""
        for block in self._blocks:
            if go_on is not None and not go_on():
                return False
            block.spans()
        return True

    def _near(self, low: int, high: int) -> Iterator[_SortedSpans[_T]]:
        """The blocks that may hold an item starting at or before ``high`` and ending at or after ``low``."""
        least, most = self._least, self._most
        last = bisect.bisect_right(least, high) if self._in_order else len(least)
        for number in range(bisect.bisect_left(self._reach, low), last):
            if least[number] <= high and most[number] >= low:
                yield self._blocks[number].spans()

    def _ordered(self, found: list[_T]) -> list[_T]:
        # A stable sort of the items found keeps them in the order a stable sort of all the items gives.
        return sorted(found, key=_start) if self._sort and len(found) > 1 else found

    def first_holding(self, offset: int, accept: Callable[[_T], bool] | None = None) -> _T | None:
        """The first item, in order, whose span holds ``offset`` (end included) and that ``accept`` takes."""
        found: list[_T] = []
        for spans in self._near(offset, offset):
            found += [item for item in spans.holding(offset) if accept is None or accept(item)]
            if found and not self._sort:
                break
        return self._ordered(found)[0] if found else None

    def holding(self, offset: int) -> list[_T]:
        """Every item whose span holds ``offset`` (end included), in order."""
        return self._ordered([item for spans in self._near(offset, offset) for item in spans.holding(offset)])

    def starting_between(self, low: int, high: int) -> list[_T]:
        """Every item whose span starts in ``[low, high)``, in order."""
        return self._ordered(
            [item for spans in self._near(low, high - 1) for item in spans.starting_between(low, high)]
        )

    def ending_between(self, start: int, end: int) -> list[_T]:
        """Every item whose span ends in ``[start, end]``, in order."""
        return self._ordered([item for spans in self._near(start, end) for item in spans.ending_between(start, end)])


def _blocks(items: Sequence[_T]) -> tuple[list[_Block[_T]], list[int], list[int]]:
    """``items`` cut into blocks of at most :data:`BOUNDS_STEP` items, with each block's earliest start and
    latest end (a recorded part's from the bounds it was added with: not moved)."""
    blocks: list[_Block[_T]] = []
    least: list[int] = []
    most: list[int] = []
    joined: list[_Stretch] = []
    size = low = high = 0
    stretches, starts, ends = _stretches(items)
    for stretch, start, end in zip(stretches, starts, ends):
        length = stretch[2] - stretch[1]
        if joined and size + length <= JOINED_AT_MOST:  # small replayed regions: one block for several
            joined.append(stretch)
            size += length
            if start < low:
                low = start
            if end > high:
                high = end
            continue
        if joined:
            blocks.append(_Block(joined))
            least.append(low)
            most.append(high)
        joined, size, low, high = [stretch], length, start, end
    if joined:
        blocks.append(_Block(joined))
        least.append(low)
        most.append(high)
    return blocks, least, most


def _stretches(items: Sequence[_T]) -> tuple[list[_Stretch], list[int], list[int]]:
    """``items`` as stretches of at most :data:`BOUNDS_STEP` items, in order, with each one's earliest start
    and latest end.

    A keystroke's new version has a recorded part per replayed region (~400 on
    10,000 lines of the bench's shapes), most of them one stretch: those are
    read in a few steps here (a hover right after a keystroke builds up to four
    such indexes; a generator per stretch took ~3 µs each).
    """
    step = BOUNDS_STEP
    stretches: list[_Stretch] = []
    starts: list[int] = []
    ends: list[int] = []
    parts: list[Any] = items.parts() if type(items) is Segments else [items]  # not isinstance: see SpanIndex
    for part in parts:
        if type(part) is tuple:
            recorded, move, _keys, _unmoved, bounds, delta = part
            count = len(recorded)
            if bounds is not None and count <= step and len(bounds) == 2:  # most parts: one stretch
                start, end = bounds
                stretches.append((recorded, 0, count, move, delta))
                starts.append(start + delta)
                ends.append(end + delta)
                continue
            known = known_bounds(part)
            if known is not None:
                flat = known[1]
                for number, (start, end) in enumerate(zip(flat[::2], flat[1::2])):
                    first = number * step
                    stretches.append((recorded, first, min(first + step, count), move, delta))
                    starts.append(start + delta)
                    ends.append(end + delta)
                continue
            ready = list(moved(part))  # bounds unknown (or not these): moved
        else:
            ready = part
        for first in range(0, len(ready), step):
            block = ready[first : first + step]
            stretches.append((ready, first, first + len(block), None, 0))
            starts.append(min([item.start for item in block]))
            ends.append(max([item.end for item in block]))
    return stretches, starts, ends


def _start(item: _Spanned) -> int:
    return item.start


#: Items :func:`move_into_place` moves between two questions to ``go_on`` (~1.5 µs each on a 2-core machine: ~1 ms).
MOVED_BETWEEN_QUESTIONS = 700


def move_into_place(analysis: DocumentAnalysis, go_on: Callable[[], bool]) -> bool:
    """Move the analysis's values, checks and references into place (and sort the checks when they came out of
    order), as reading them whole would, asking ``go_on`` about every :data:`MOVED_BETWEEN_QUESTIONS` items:
    False once it says no.  Reading them whole moves every item of a version replayed after a keystroke at
    once (10-15 ms on 10,000 lines, ~50 ms on 2.5 M characters), which a keystroke meanwhile waited for."""
    for results in (analysis.values, analysis.checks, analysis.references):
        if not go_on():
            return False
        if type(results) is Segments:  # not isinstance: see SpanIndex
            done = results.placed_unless_stopped(go_on, MOVED_BETWEEN_QUESTIONS)
        elif type(results) is SortedOnRead:
            done = results.sorted_unless_stopped(go_on, MOVED_BETWEEN_QUESTIONS)
        else:
            done = True
        if not done:
            return False
    return True


def once_per_analysis(analysis: DocumentAnalysis, name: str, build: Callable[[DocumentAnalysis], object]) -> object:
    """``build(analysis)``, once per analysis (two threads racing build it twice and keep one)."""
    found = analysis.lookups.get(name)
    if found is None:
        found = analysis.lookups[name] = build(analysis)
    return found


def values_index(analysis: DocumentAnalysis) -> SpanIndex[ValueResult]:
    """The analysis's values by span."""
    return once_per_analysis(analysis, "values", lambda a: SpanIndex(a.values))  # type: ignore[return-value]


def checks_index(analysis: DocumentAnalysis) -> SpanIndex[CheckResult]:
    """The analysis's checks by span."""
    return once_per_analysis(analysis, "checks", lambda a: SpanIndex(a.checks))  # type: ignore[return-value]


def bindings_index(analysis: DocumentAnalysis) -> SpanIndex[Binding]:
    """The analysis's definitions by span (the name defined)."""
    return once_per_analysis(analysis, "bindings", lambda a: SpanIndex(a.bindings))  # type: ignore[return-value]


def references_index(analysis: DocumentAnalysis) -> SpanIndex[Reference]:
    """The analysis's resolved uses of names by span."""
    return once_per_analysis(analysis, "references", lambda a: SpanIndex(a.references))  # type: ignore[return-value]


def definitions_by_name(analysis: DocumentAnalysis) -> dict[str, list[Binding]]:
    """Every definition of each name, in the order of ``analysis.bindings``."""

    def build(a: DocumentAnalysis) -> dict[str, list[Binding]]:
        found: dict[str, list[Binding]] = {}
        for binding in a.bindings:
            found.setdefault(binding.name, []).append(binding)
        return found

    return once_per_analysis(analysis, "by_name", build)  # type: ignore[return-value]


def named_value_at(analysis: DocumentAnalysis, start: int) -> ValueResult | None:
    """The value of the definition that starts at ``start`` (the last one in list order, if several)."""
    found = [value for value in values_index(analysis).starting_between(start, start + 1) if value.name is not None]
    return found[-1] if found else None


class VisibleScope(Mapping[str, Binding]):
    """The definitions visible at ``start``: the last one (in ``bindings`` order) of each name defined
    before it, at the top level or in the problem holding ``start``; imported names under them;
    ``overrides`` over all (how the analysis resolved the names of one expression).

    Looked up per name (the scan it replaces built the whole dict per hover).
    """

    def __init__(self, analysis: DocumentAnalysis, start: int, overrides: Mapping[str, Binding]) -> None:
        self._analysis, self._start, self._overrides = analysis, start, overrides
        self._problem = analysis.problem_at(start)
        self._by_name = definitions_by_name(analysis)

    def _find(self, name: str) -> Binding | None:
        found = self._overrides.get(name)
        if found is not None:
            return found
        analysis = self._analysis
        for binding in reversed(self._by_name.get(name, ())):
            if binding.start < self._start:
                inside = analysis.problem_at(binding.start)
                if inside is None or inside is self._problem:
                    return binding
        imported = analysis.exports.get(name)
        return imported if imported is not None and imported.path != analysis.path else None

    def __getitem__(self, name: str) -> Binding:
        found = self._find(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def _names(self) -> list[str]:
        names = dict.fromkeys(n for n, b in self._analysis.exports.items() if b.path != self._analysis.path)
        names.update(dict.fromkeys(self._by_name))
        names.update(dict.fromkeys(self._overrides))
        return [name for name in names if self._find(name) is not None]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())
