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

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")


class Segments(Sequence[T]):
    """An append-only list built from ready items and lazily moved parts."""

    __slots__ = ("_parts", "_length")

    def __init__(self, items: Iterable[T] = ()) -> None:
        #: Each part is a list of ready items or a (recorded items, move) pair.
        self._parts: list[Any] = [list(items)]
        self._length = len(self._parts[0])

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

    def add_moved(self, recorded: Sequence[Any], move: Callable[[Any], T]) -> None:
        """Add ``move(r)`` for each recorded item, computed only when the list is read."""
        if recorded:
            self._parts.append((recorded, move))
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
            recorded, move = head
            head = list(map(move, recorded))
        for part in parts[first + 1 :]:
            if type(part) is list:
                head.extend(part)
            else:
                recorded, move = part
                head.extend(map(move, recorded))
        parts[first:] = [head]
        return head[start - before :]

    def _flat(self) -> list[T]:
        if len(self._parts) == 1 and type(self._parts[0]) is list:
            return self._parts[0]
        flat: list[T] = []
        for part in self._parts:
            if type(part) is list:
                flat.extend(part)
            else:
                recorded, move = part
                flat.extend(map(move, recorded))
        self._parts = [flat]
        return flat

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


class SortedOnRead(Sequence[T]):
    """A sequence sorted by ``key`` when first read.

    The checks of a draft whose claims wait for names below come out of order
    (``forward.py``) and are sorted by start; sorting moves every replayed one
    into place (on 10,000 lines of such claims, ~16% of a keystroke), yet
    publishing diagnostics reads none of them: they are sorted once asked for.
    """

    __slots__ = ("_source", "_key", "_sorted")

    def __init__(self, source: Sequence[T], key: Callable[[T], Any]) -> None:
        self._source = source
        self._key = key
        self._sorted: list[T] | None = None

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
