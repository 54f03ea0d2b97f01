"""A sequence sorted when first read, and the windows of it read before that.

The checks of a draft whose claims wait for names below come out of order:
those claims are resolved, and their checks added, when their scope ends
(``forward.py``).  Sorting them moves every replayed check into place, yet
publishing diagnostics reads none of them, and problem verdicts read only the
checks inside each problem (:meth:`SortedOnRead.window`).  The checks added
before the first one out of order are in order (``Results.count_checks``
closes their last part then, ``Segments.close_part``): they are read as an ordered list's parts are
(``segments.ordered_window``), and only the parts after them as parts out of
order (:class:`_Spread`): on ~200 claims waiting for misspelt names, a third
of the parts, not all.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, overload

from scaling_core.document.segments import Segments, known_bounds, moved, ordered_window, part_keys, read_part

T = TypeVar("T")


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
            spread = self._spread = _Spread(source.parts(), key, source.ordered_parts())
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
    that may hold its keys, in their order, each at most once.  The first ``ordered`` parts are in order, one
    after another, and are read as an ordered list's are."""

    __slots__ = ("_parts", "_key", "_by_least", "_leasts", "_reach", "_least", "_mosts", "_ordered", "_firsts",
                 "_lasts")  # fmt: skip

    def __init__(self, parts: list[Any], key: Callable[[Any], int], ordered: int = 0) -> None:
        self._key = key
        self._ordered = parts[:ordered]
        self._firsts, self._lasts = part_keys(self._ordered, key)
        self._parts: list[Any] = []
        leasts: list[int] = []
        mosts: list[int] = []
        for part in parts[ordered:]:
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
                    part = sorted(moved(part), key=key)
                    least, most = key(part[0]), key(part[-1])
                elif len(bounds[1]) == 2:  # most parts
                    delta, (least, most) = bounds  # spans end after they start: the end is a bound
                    least, most = least + delta, most + delta
                else:  # starts and ends, flat
                    least = min(bounds[1][::2]) + bounds[0]
                    most = max(bounds[1][1::2]) + bounds[0]
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
        found: list[Any] = []
        if self._ordered:
            ordered_window(self._ordered, self._firsts, self._lasts, low, high, key, placed, found)
        first = bisect.bisect_left(self._reach, low)
        numbers = sorted(n for n in self._by_least[first : bisect.bisect_left(self._leasts, high)] if mosts[n] >= low)
        for number in numbers:
            read_part(parts[number], self._least[number], mosts[number], low, high, key, placed, found)
        return found
