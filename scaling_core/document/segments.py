"""A result list whose replayed parts are moved into place only when first read.

After a keystroke near the top of a long draft, every later region is replayed
at a new offset.  Copying each of its values and references with moved spans
was most of a keystroke's work (measured on 10,000 lines: ~6,500 objects,
~20 ms), yet publishing diagnostics reads neither; inlay hints, hover and
navigation read them once per version.  :class:`Segments` keeps replayed parts
as (recorded items, how to move one) and builds the flat list on first read.
Appending and reading the last item, which the interpreter does while
evaluating, never force that.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")


class Segments(Sequence[T]):
    """An append-only list built from ready items and lazily moved parts."""

    __slots__ = ("_parts", "_length", "_index")

    def __init__(self, items: Iterable[T] = ()) -> None:
        #: Each part is a list of ready items or (recorded items, move, the first and last key they will
        #: have or None): see :meth:`add_moved`.
        self._parts: list[Any] = [list(items)]
        self._length = len(self._parts[0])
        #: :meth:`window`'s index of the parts: (the parts list it indexes and its length, the number
        #: of items, each part's first key, each part's last key).
        self._index: tuple[Any, ...] | None = None

    def append(self, item: T) -> None:
        """Add one ready item."""
        last = self._parts[-1]
        if type(last) is list:
            last.append(item)
        else:
            self._parts.append([item])
        self._length += 1

    def extend(self, items: Iterable[T]) -> None:
        """Add ready items."""
        last = self._parts[-1]
        if type(last) is not list:
            last = []
            self._parts.append(last)
        before = len(last)
        last.extend(items)
        self._length += len(last) - before

    def add_moved(
        self,
        recorded: Sequence[Any],
        move: Callable[[Any], T],
        keys: tuple[int, int] | None = None,
        unmoved: Callable[[Any], T] | None = None,
        bounds: tuple[int, Sequence[tuple[int, int]]] | None = None,
    ) -> None:
        """Add ``move(r)`` for each recorded item, computed only when the list is read.

        ``keys``, when known, are the least and the largest key (see :meth:`window`) the moved items
        will have: :meth:`window` then skips them without moving them.  ``unmoved(r)``, when given, is the
        item as recorded, for a window read only for what moving leaves as it is.  ``bounds``, when known,
        are (how far moving moves a span, :func:`span_bounds` of the recorded items' spans): an index of
        spans (``lookup.SpanIndex``) then moves only the items asked about.
        """
        if recorded:
            self._parts.append((recorded, move, keys, unmoved, bounds))
            self._length += len(recorded)

    def pop(self) -> T:
        """Remove and return the last item."""
        last = self._parts[-1]
        if type(last) is not list or not last:
            last = self._flat()
        self._length -= 1
        item: T = last.pop()
        return item

    def tail(self, start: int) -> list[T]:
        """The items from index ``start`` on (cheap when they are all ready items)."""
        last = self._parts[-1]
        if type(last) is list and self._length - len(last) <= start:
            return last[start - (self._length - len(last)) :]
        return self._flat()[start:]

    def since(self, start: int) -> list[T]:
        """The items from index ``start`` on, moving into place only the parts that hold them.

        The parts after the one holding ``start`` join it as ready items (what is
        read later reads the same objects); the items before ``start`` are not
        copied, so reading each new slice of a long list costs the slice alone.
        """
        parts = self._parts
        first, before = len(parts), self._length
        while first > 0 and before > start:
            first -= 1
            part = parts[first]
            before -= len(part) if type(part) is list else len(part[0])
        if first == len(parts):
            return []
        head = parts[first]
        if type(head) is not list:
            head = list(map(head[1], head[0]))
        for part in parts[first + 1 :]:
            if type(part) is list:
                head.extend(part)
            else:
                head.extend(map(part[1], part[0]))
        parts[first:] = [head]
        return head[start - before :]

    def parts(self) -> list[Any]:
        """The parts as kept, none built: lists of ready items and recorded parts, each recorded part as
        (recorded items, move, keys, unmoved, bounds): see :meth:`add_moved`."""
        return list(self._parts)

    def _flat(self) -> list[T]:
        if len(self._parts) == 1 and type(self._parts[0]) is list:
            return self._parts[0]
        flat: list[T] = []
        for part in self._parts:
            if type(part) is list:
                flat.extend(part)
            else:
                flat.extend(map(part[1], part[0]))
        self._parts = [flat]
        return flat

    def placed_unless_stopped(self, go_on: Callable[[], bool], between: int) -> bool:
        """Move every item into place, as reading the whole list does, asking ``go_on`` each time about
        ``between`` items have been moved: False, and the list left as it was, once it says no (the editor
        moves a draft's results into place while the author pauses, and stops when the author types)."""
        if len(self._parts) == 1 and type(self._parts[0]) is list:
            return True
        flat: list[T] = []
        since = 0
        for part in self._parts:
            if since >= between:
                if not go_on():
                    return False
                since = 0
            if type(part) is list:
                flat.extend(part)
                since += len(part)
                continue
            items, move = part[0], part[1]
            for start in range(0, len(items), between):  # a long part (a 5,000-statement block's) a slice at a time
                if start:
                    if not go_on():
                        return False
                    since = 0
                moved = items[start : start + between]
                flat.extend(map(move, moved))
                since += len(moved)
        self._parts = [flat]
        return True

    def window(self, low: int, high: int, key: Callable[[T], int], placed: bool = True) -> list[T]:
        """The items whose ``key`` lies in [low, high), for a list in order of ``key``.

        Moves only the parts that may hold such items: problem verdicts read
        the checks inside each problem, and moving every check into place
        for them was ~15% of a keystroke near the top of a long book-like
        draft.  A part added with its keys is skipped unmoved.  Unless
        ``placed``, a part whose keys all lie inside is not moved either: its
        items come as recorded (``add_moved``'s ``unmoved``), for a reader of
        what moving leaves as it is (a problem's verdict counts its checks' statuses).
        """
        parts = self._parts
        index = self._index
        if index is None or index[0] is not parts or index[1] != len(parts) or index[2] != self._length:
            index = self._index = (parts, len(parts), self._length, *_part_keys(parts, key))
        firsts, lasts = index[3], index[4]
        found: list[T] = []
        number = max(0, bisect.bisect_left(firsts, low) - 1)  # parts before it end before ``low``
        while number < len(parts) and firsts[number] < high:
            if lasts[number] >= low:
                part = parts[number]
                if type(part) is list:  # ready items: often one long list (a fresh analysis's)
                    begin = bisect.bisect_left(part, low, key=key)
                    found.extend(part[begin : bisect.bisect_left(part, high, lo=begin, key=key)])
                elif not placed and part[3] is not None and low <= firsts[number] and lasts[number] < high:
                    found.extend(map(part[3], part[0]))
                else:
                    found.extend([item for item in map(part[1], part[0]) if low <= key(item) < high])
            number += 1
        return found

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        last = self._parts[-1]
        if index == -1 and type(last) is list and last:
            found: T = last[-1]
            return found
        return self._flat()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._flat())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Segments, list)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Segments({self._flat()!r})"


def _part_keys(parts: list[Any], key: Callable[[Any], int]) -> tuple[list[int], list[int]]:
    """Each part's least and largest key (an empty part: the previous part's last, so firsts stay sorted)."""
    firsts, lasts = [], []
    last = -1
    for part in parts:
        if type(part) is list:
            if part:
                first, last = key(part[0]), key(part[-1])
            else:
                first = last
        elif part[2] is not None:
            first, last = part[2]
        else:
            first, last = key(part[1](part[0][0])), key(part[1](part[0][-1]))
        firsts.append(first)
        lasts.append(last)
    return firsts, lasts


#: How many consecutive items one of :func:`span_bounds`'s pairs covers.
BOUNDS_STEP = 256


def known_bounds(part: tuple[Any, ...]) -> tuple[int, Sequence[tuple[int, int]]] | None:
    """A recorded part's bounds (how far moving moves a span, :func:`span_bounds` of its items as recorded), when
    it was added with bounds that fit its items (a pair per :data:`BOUNDS_STEP` items); else None."""
    bounds = part[4]
    return bounds if bounds is not None and -(-len(part[0]) // BOUNDS_STEP) == len(bounds[1]) else None


def span_bounds(starts: list[int], ends: list[int]) -> tuple[tuple[int, int], ...]:
    """Of each :data:`BOUNDS_STEP` consecutive spans (``starts[n]``, ``ends[n]``): the earliest start, the latest end."""
    step = BOUNDS_STEP
    return tuple([(min(starts[n : n + step]), max(ends[n : n + step])) for n in range(0, len(starts), step)])


class SortedOnRead(Sequence[T]):
    """A sequence sorted by ``key`` when first read.

    The checks of a draft whose claims wait for names below come out of order
    (``forward.py``) and are sorted by start; sorting moves every replayed one
    into place (on 10,000 lines of such claims, ~16% of a keystroke), yet
    publishing diagnostics reads none of them: they are sorted once asked for.
    """

    __slots__ = ("_source", "_key", "_sorted", "_spread")

    def __init__(self, source: Sequence[T], key: Callable[[T], int]) -> None:
        self._source = source
        self._key = key
        self._sorted: list[T] | None = None
        #: :meth:`window`'s index of an unsorted :class:`Segments` source (see :class:`_Spread`).
        self._spread: _Spread | None = None

    def window(self, low: int, high: int, placed: bool = True) -> list[T]:
        """The items whose key lies in ``[low, high)``, in sorted order, without sorting the rest.

        Of a :class:`Segments` source not yet sorted, only the parts that may
        hold such items are read (``Segments.window``, for a list out of
        order): problem verdicts read the checks inside each problem, and
        sorting every check first moved each into place (on a draft whose
        claims wait for misspelt names, ~20% of a keystroke).  Unless
        ``placed``, a part whose items all lie inside comes as recorded, and
        the items come in no particular order (a reader of statuses alone).
        """
        source, key = self._source, self._key
        if self._sorted is not None or type(source) is not Segments:  # not isinstance: see lookup.SpanIndex
            items = self._items()
            begin = bisect.bisect_left(items, low, key=key)
            return items[begin : bisect.bisect_left(items, high, lo=begin, key=key)]
        spread = self._spread
        if spread is None:
            spread = self._spread = _Spread(source.parts(), key)
        found = spread.window(low, high, placed)
        if placed:
            found.sort(key=key)  # stable: items of equal keys keep their order in the source, as sorting all does
        return found

    def sorted_unless_stopped(self, go_on: Callable[[], bool], between: int) -> bool:
        """Sort it now (its source moved into place a slice at a time: ``Segments.placed_unless_stopped``),
        unless ``go_on`` says no first: False then, nothing sorted."""
        source = self._source
        if self._sorted is None and type(source) is Segments and not source.placed_unless_stopped(go_on, between):
            return False
        self._items()
        return True

    def contents(self) -> tuple[Sequence[T], bool]:
        """Its items as held now: the sorted list once sorted (and True), else the source as added (False)."""
        found = self._sorted
        return (found, True) if found is not None else (self._source, False)

    def _items(self) -> list[T]:
        # The source is kept: two threads reading at once (the server's handlers and its worker) both sort it.
        found = self._sorted
        if found is None:
            found = self._sorted = sorted(self._source, key=self._key)
        return found

    def __len__(self) -> int:
        return len(self._source)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        return self._items()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SortedOnRead, Segments, list)):
            return self._items() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"SortedOnRead({self._items()!r})"


class _Spread:
    """The parts of a list out of order, by the least and largest key each may hold: a window reads the parts
    that may hold its keys, in their order, each at most once."""

    __slots__ = ("_parts", "_key", "_by_least", "_leasts", "_reach", "_least", "_mosts")

    def __init__(self, parts: list[Any], key: Callable[[Any], int]) -> None:
        self._key = key
        self._parts: list[Any] = []
        leasts: list[int] = []
        mosts: list[int] = []
        for part in parts:
            if type(part) is list:
                if not part:
                    continue
                keys = [key(item) for item in part]
                if any(a > b for a, b in zip(keys, keys[1:])):  # a ready list out of order: sorted here, stably
                    part = sorted(part, key=key)
                least, most = min(keys), max(keys)
            else:
                bounds = known_bounds(part)
                if bounds is None:  # moved now
                    part = sorted(map(part[1], part[0]), key=key)
                    least, most = key(part[0]), key(part[-1])
                elif len(bounds[1]) == 1:  # most parts
                    delta, ((least, most),) = bounds  # spans end after they start: the end is a bound
                    least, most = least + delta, most + delta
                else:
                    least = min([start for start, _end in bounds[1]]) + bounds[0]
                    most = max([end for _start, end in bounds[1]]) + bounds[0]
            self._parts.append(part)
            leasts.append(least)
            mosts.append(most)
        self._by_least = sorted(range(len(leasts)), key=leasts.__getitem__)
        self._leasts = [leasts[n] for n in self._by_least]
        self._least, self._mosts = leasts, mosts
        reach, most = [], -1
        for n in self._by_least:
            most = max(most, mosts[n])
            reach.append(most)
        #: The largest key of the parts up to each in ``_by_least`` (never decreasing: bisected).
        self._reach = reach

    def window(self, low: int, high: int, placed: bool) -> list[Any]:
        """The items with keys in ``[low, high)``, part after part in the list's order (not sorted across parts)."""
        key, parts, mosts = self._key, self._parts, self._mosts
        first = bisect.bisect_left(self._reach, low)
        numbers = sorted(n for n in self._by_least[first : bisect.bisect_left(self._leasts, high)] if mosts[n] >= low)
        found: list[Any] = []
        for number in numbers:
            part = parts[number]
            if type(part) is list:  # sorted by key
                begin = bisect.bisect_left(part, low, key=key)
                found.extend(part[begin : bisect.bisect_left(part, high, lo=begin, key=key)])
            elif not placed and part[3] is not None and low <= self._least[number] and mosts[number] < high:
                found.extend(map(part[3], part[0]))
            else:
                found.extend([item for item in map(part[1], part[0]) if low <= key(item) < high])
        return found
