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
from itertools import repeat
from typing import Any, TypeVar, overload

T = TypeVar("T")


class Segments(Sequence[T]):
    """An append-only list built from ready items and lazily moved parts."""

    __slots__ = ("_parts", "_length", "_index", "_ordered")

    def __init__(self, items: Iterable[T] = ()) -> None:
        #: Each part is a list of ready items or a recorded part (recorded items, move, keys, unmoved, bounds,
        #: delta): see :meth:`add_moved`.
        self._parts: list[Any] = [list(items)]
        self._length = len(self._parts[0])
        #: :meth:`window`'s index of the parts: (the parts list it indexes and its length, the number
        #: of items, each part's first key, each part's last key).
        self._index: tuple[Any, ...] | None = None
        #: How many first parts hold items in order, one part after another, as :meth:`close_part` said
        #: (0 once parts are joined: a joined part may hold later items).
        self._ordered = 0

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
        move: Callable[[int, Any], T],
        delta: int,
        keys: tuple[int, int] | None = None,
        unmoved: Callable[[Any], T] | None = None,
        bounds: Sequence[int] | None = None,
    ) -> None:
        """Add ``move(delta, r)`` for each recorded item, computed only when the list is read.

        ``move`` is one function for every part (a part of its own, ``functools.partial(move, delta)``, took
        ~200 bytes a part with its arguments: a keystroke near the top of a 20 MB draft adds ~28,000 parts).
        ``keys``, when known, are the least and the largest key (see :meth:`window`) the moved items
        will have: :meth:`window` then skips them without moving them.  ``unmoved(r)``, when given, is the
        item as recorded, for a window read only for what moving leaves as it is.  ``bounds``, when known,
        are :func:`span_bounds` of the recorded items' spans (moving moves each span by ``delta``): an index of
        spans (``lookup.SpanIndex``) then moves only the items asked about.
        """
        if recorded:
            self._parts.append((recorded, move, keys, unmoved, bounds, delta))
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
            head = list(moved(head))
        for part in parts[first + 1 :]:
            if type(part) is list:
                head.extend(part)
            else:
                head.extend(moved(part))
        parts[first:] = [head]
        self._ordered = min(self._ordered, first)
        return head[start - before :]

    def parts(self) -> list[Any]:
        """The parts as kept, none built: lists of ready items and recorded parts, each recorded part as
        (recorded items, move, keys, unmoved, bounds, delta): see :meth:`add_moved` (:func:`moved` moves one)."""
        return list(self._parts)

    def _flat(self) -> list[T]:
        if len(self._parts) == 1 and type(self._parts[0]) is list:
            return self._parts[0]
        flat: list[T] = []
        for part in self._parts:
            if type(part) is list:
                flat.extend(part)
            else:
                flat.extend(moved(part))
        self._parts = [flat]
        self._ordered = 0
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
            items, move, delta = part[0], part[1], part[5]
            for start in range(0, len(items), between):  # a long part (a 5,000-statement block's) a slice at a time
                if start:
                    if not go_on():
                        return False
                    since = 0
                some = items[start : start + between]
                flat.extend(map(move, repeat(delta), some))
                since += len(some)
        self._parts = [flat]
        self._ordered = 0
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
            index = self._index = (parts, len(parts), self._length, *part_keys(parts, key))
        found: list[T] = []
        ordered_window(parts, index[3], index[4], low, high, key, placed, found)
        return found

    def close_part(self) -> None:
        """The items so far are in order (by the key a window reads), one part after another: end the last
        part, so that items added later go to new ones (:meth:`ordered_parts`)."""
        self._parts.append([])
        self._ordered = len(self._parts) - 1

    def ordered_parts(self) -> int:
        """How many of :meth:`parts` hold items in order, one part after another (see :meth:`close_part`)."""
        return self._ordered

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


def ordered_window(
    parts: Sequence[Any],
    firsts: list[int],
    lasts: list[int],
    low: int,
    high: int,
    key: Callable[[Any], int],
    placed: bool,
    found: list[Any],
) -> None:
    """Add to ``found`` the items of ``parts`` (in order of ``key``, the least and largest key of each
    ``firsts`` and ``lasts``) whose key lies in [low, high): see :meth:`Segments.window`."""
    number = max(0, bisect.bisect_left(firsts, low) - 1)  # parts before it end before ``low``
    while number < len(parts) and firsts[number] < high:
        if lasts[number] >= low:
            read_part(parts[number], firsts[number], lasts[number], low, high, key, placed, found)
        number += 1


def read_part(
    part: Any, least: int, most: int, low: int, high: int, key: Callable[[Any], int], placed: bool, found: list[Any]
) -> None:
    """Add to ``found`` the items of one part (keys from ``least`` to ``most``) whose key lies in [low, high):
    a ready list bisected (sorted by key), a recorded part as recorded if wholly inside and not ``placed``
    (``Segments.add_moved``'s ``unmoved``), else moved and filtered."""
    if type(part) is list:  # ready items: often one long list (a fresh analysis's)
        begin = bisect.bisect_left(part, low, key=key)
        found.extend(part[begin : bisect.bisect_left(part, high, lo=begin, key=key)])
    elif not placed and part[3] is not None and low <= least and most < high:
        found.extend(map(part[3], part[0]))
    else:
        found.extend([item for item in moved(part) if low <= key(item) < high])


def part_keys(parts: Sequence[Any], key: Callable[[Any], int]) -> tuple[list[int], list[int]]:
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
            move, delta = part[1], part[5]
            first, last = key(move(delta, part[0][0])), key(move(delta, part[0][-1]))
        firsts.append(first)
        lasts.append(last)
    return firsts, lasts


#: How many consecutive items each start and end of :func:`span_bounds` covers.
BOUNDS_STEP = 256


def moved(part: tuple[Any, ...]) -> Iterator[Any]:
    """A recorded part's items (see :meth:`Segments.add_moved`), moved into place as they are read."""
    return map(part[1], repeat(part[5]), part[0])


def known_bounds(part: tuple[Any, ...]) -> tuple[int, Sequence[int]] | None:
    """A recorded part's bounds (how far moving moves a span, :func:`span_bounds` of its items as recorded), when
    it was added with bounds that fit its items (a start and an end per :data:`BOUNDS_STEP` items); else None."""
    bounds = part[4]
    return (part[5], bounds) if bounds is not None and -(-len(part[0]) // BOUNDS_STEP) * 2 == len(bounds) else None


def span_bounds(starts: list[int], ends: list[int]) -> tuple[int, ...]:
    """Of each :data:`BOUNDS_STEP` consecutive spans (``starts[n]``, ``ends[n]``): the earliest start and the latest
    end, flat (``start, end, start, end, ...``): most results have one stretch, and a tuple of one pair took
    48 bytes more (every region's effects keep three; ~3 MB of a 20 MB draft's analysis)."""
    step = BOUNDS_STEP
    flat: list[int] = []
    for n in range(0, len(starts), step):
        flat += (min(starts[n : n + step]), max(ends[n : n + step]))
    return tuple(flat)
