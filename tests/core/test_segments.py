"""Segments: a list whose moved parts are built only when first read."""

from __future__ import annotations

from scaling_core.document.segments import Segments, SortedOnRead


def test_reads_see_ready_and_moved_items_in_order_and_build_each_once() -> None:
    built: list[int] = []

    def move(item: int) -> int:
        built.append(item)
        return item + 100

    items = Segments([1, 2])
    items.add_moved((3, 4), move)
    items.append(5)
    items.add_moved((), move)
    assert len(items) == 5 and built == []  # nothing built yet
    assert items[-1] == 5 and items.tail(4) == [5] and built == []  # the interpreter's reads stay cheap
    assert list(items) == [1, 2, 103, 104, 5] and built == [3, 4]
    assert items[2] == 103 and items[1:3] == [2, 103] and built == [3, 4]  # built once, then kept
    assert items == [1, 2, 103, 104, 5]


def test_tail_and_pop_across_moved_parts() -> None:
    items: Segments[int] = Segments()
    items.add_moved((1, 2), lambda i: -i)
    assert items.tail(1) == [-2]
    items.add_moved((3,), lambda i: -i)
    assert items.pop() == -3 and len(items) == 2 and list(items) == [-1, -2]
    items.append(7)
    assert items.pop() == 7 and items.tail(0) == [-1, -2]


def test_sorted_on_read_moves_and_sorts_only_once_read() -> None:
    built: list[int] = []

    def move(item: int) -> int:
        built.append(item)
        return item * 10

    items = Segments([50, 10])
    items.add_moved((4, 2), move)
    ordered = SortedOnRead(items, key=lambda item: item)
    assert len(ordered) == 4 and built == []  # publishing asks the count, never the items
    assert ordered[0] == 10 and list(ordered) == [10, 20, 40, 50] and built == [4, 2]
    assert ordered == [10, 20, 40, 50] and ordered[1:3] == [20, 40] and built == [4, 2]
