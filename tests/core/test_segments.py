"""Segments: a list whose moved parts are built only when first read."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from scaling_core.document.segments import Segments
from scaling_core.document.sorted_on_read import SortedOnRead
from tests.fuzz.properties import examples


def test_reads_see_ready_and_moved_items_in_order_and_build_each_once() -> None:
    built: list[int] = []

    def move(delta: int, item: int) -> int:
        built.append(item)
        return item + delta

    items = Segments([1, 2])
    items.add_moved((3, 4), move, 100)
    items.append(5)
    items.add_moved((), move, 100)
    assert len(items) == 5 and built == []  # nothing built yet
    assert items[-1] == 5 and items.tail(4) == [5] and built == []  # the interpreter's reads stay cheap
    assert list(items) == [1, 2, 103, 104, 5] and built == [3, 4]
    assert items[2] == 103 and items[1:3] == [2, 103] and built == [3, 4]  # built once, then kept
    assert items == [1, 2, 103, 104, 5]


def test_tail_and_pop_across_moved_parts() -> None:
    items: Segments[int] = Segments()
    items.add_moved((1, 2), lambda _d, i: -i, 0)
    assert items.tail(1) == [-2]
    items.add_moved((3,), lambda _d, i: -i, 0)
    assert items.pop() == -3 and len(items) == 2 and list(items) == [-1, -2]
    items.append(7)
    assert items.pop() == 7 and items.tail(0) == [-1, -2]


def test_sorted_on_read_moves_and_sorts_only_once_read() -> None:
    built: list[int] = []

    def move(factor: int, item: int) -> int:
        built.append(item)
        return item * factor

    items = Segments([50, 10])
    items.add_moved((4, 2), move, 10)
    ordered = SortedOnRead(items, key=lambda item: item)
    assert len(ordered) == 4 and built == []  # publishing asks the count, never the items
    assert ordered[0] == 10 and list(ordered) == [10, 20, 40, 50] and built == [4, 2]
    assert ordered == [10, 20, 40, 50] and ordered[1:3] == [20, 40] and built == [4, 2]


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["ready", "moved", "moved, keys given"]), st.lists(st.integers(0, 4), max_size=4)),
        max_size=12,
    ),  # fmt: skip
    st.integers(-2, 60),
    st.integers(0, 30),
    st.lists(st.integers(0, 3), max_size=3),
)
def test_a_window_holds_exactly_the_items_whose_key_is_inside_it(
    parts: list[tuple[str, list[int]]], low: int, width: int, pops: list[int]
) -> None:
    """Items in order of key (gaps, runs of equal keys, empty parts, popped items): a window equals
    filtering the flat list, and reading it again (its index kept) gives the same."""

    def move(delta: int, item: int) -> int:
        return item + delta

    items: Segments[int] = Segments()
    expected: list[int] = []
    last = 0
    for kind, steps in parts:
        keys = [last + sum(steps[: n + 1]) for n in range(len(steps))]
        last = keys[-1] if keys else last
        expected += keys
        if kind == "ready":
            items.extend(keys)
        else:
            recorded = tuple(key - 7 for key in keys)  # recorded 7 before where they land
            bounds = (keys[0], keys[-1]) if keys and kind == "moved, keys given" else None
            items.add_moved(recorded, move, 7, bounds, as_recorded)
    for _ in pops[: len(expected)]:
        assert items.pop() == expected.pop()
    high = low + width
    inside = [key for key in expected if low <= key < high]
    unplaced = items.window(low, high, int, placed=False)  # before the placed window: it may build parts
    assert [-key - 1000 if key < 0 else key for key in unplaced] == inside  # the same items, some as recorded
    assert items.window(low, high, int) == inside
    assert items.window(low, high, int) == inside  # the index, reused
    assert list(items) == expected


def as_recorded(item: int) -> int:
    """A recorded item, marked (negative) so that a test can tell it from a moved one."""
    return -(item + 7) - 1000


def test_a_window_moves_only_the_parts_that_may_hold_its_items() -> None:
    moved: list[int] = []

    def move(delta: int, item: int) -> int:
        moved.append(item)
        return item + delta

    items = Segments([1, 2])
    items.add_moved((10, 20), move, 100, (110, 120))
    items.add_moved((30, 40), move, 100, (130, 140))
    items.add_moved((50,), move, 100, (150, 150))
    assert items.window(115, 135, int) == [120, 130] and moved == [10, 20, 30, 40]
    assert items.window(0, 3, int) == [1, 2] and moved == [10, 20, 30, 40]
    assert items.window(150, 151, int) == [150] and moved[-1] == 50


def test_a_window_read_for_what_moving_keeps_leaves_the_parts_inside_it_unmoved() -> None:
    moved: list[int] = []

    def move(delta: int, item: int) -> int:
        moved.append(item)
        return item + delta

    items = Segments([1, 2])
    items.add_moved((10, 20), move, 100, (110, 120), lambda item: -item)
    items.add_moved((30, 40), move, 100, (130, 140), lambda item: -item)
    assert items.window(105, 135, int, placed=False) == [-10, -20, 130] and moved == [30, 40]
    assert items.window(105, 135, int) == [110, 120, 130]  # placed, as anyone else reads them


#: An item of :func:`test_a_window_of_a_list_out_of_order_is_what_sorting_all_gives`: (start, end, tag).
Spanned = tuple[int, int, int]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "ready",
                    "moved",
                    "moved, bounds given",
                    "moved, bounds and unmoved given",
                    "moved, bounds given, long",
                ]
            ),
            st.lists(st.tuples(st.integers(0, 40), st.integers(0, 6)), max_size=6),
            st.integers(-5, 20),
        ),
        max_size=10,
    ),  # fmt: skip
    st.integers(-2, 60),
    st.integers(0, 30),
)
def test_a_window_of_a_list_out_of_order_is_what_sorting_all_gives(
    parts: list[tuple[str, list[tuple[int, int]], int]], low: int, width: int
) -> None:
    """Parts in any order, items in any order inside them, equal keys: a window of the sorted list, read
    without sorting it, is the sorted list's slice (stable), and unless placed the same items.  A long part
    has bounds for each of its stretches of ``BOUNDS_STEP`` items."""
    from scaling_core.document.segments import BOUNDS_STEP, span_bounds

    def move(delta: int, item: Spanned) -> Spanned:
        return (item[0] + delta, item[1] + delta, item[2])

    def build() -> Segments[Spanned]:
        """The list, none of its parts moved yet (reading a list whole moves them all into place)."""
        items: Segments[Spanned] = Segments()
        tag = 0
        for kind, spans, delta in parts:
            if kind.endswith("long") and spans:
                spans = spans * (2 * BOUNDS_STEP // len(spans) + 1)  # at least three stretches
            recorded = []
            for start, length in spans:
                recorded.append((start, start + length, tag))
                tag += 1
            if kind == "ready":
                items.extend(recorded)
                continue
            starts, ends = [r[0] for r in recorded], [r[1] for r in recorded]
            bounds = span_bounds(starts, ends) if "bounds" in kind else None
            unmoved = (lambda item: item) if "unmoved" in kind else None
            items.add_moved(tuple(recorded), move, delta, None, unmoved, bounds)
        return items

    high = low + width
    every = sorted(build(), key=lambda item: item[0])
    expected = [item for item in every if low <= item[0] < high]
    for placed in (True, False):
        ordered = SortedOnRead(build(), key=lambda item: item[0])
        found = ordered.window(low, high, placed)
        if placed:
            assert found == expected
            assert ordered.window(low, high) == expected  # its index kept
        else:
            assert sorted(item[2] for item in found) == sorted(item[2] for item in expected)
        assert list(ordered) == every
        assert ordered.window(low, high) == expected  # once sorted, a slice of the sorted list


def test_moved_into_place_a_slice_at_a_time_unless_told_to_stop() -> None:
    def parts_of_three() -> Segments[int]:
        items = Segments([1, 2])
        for first in range(3, 30, 3):
            items.add_moved((first, first + 1, first + 2), lambda factor, i: i * factor, 10)
        return items

    expected = list(parts_of_three())
    asked: list[int] = []
    items = parts_of_three()
    assert items.placed_unless_stopped(lambda: asked.append(len(asked)) is None, 4) is True
    assert len(asked) == 4  # once 4 items or more were moved since the last question (whole parts: 5, then 6)
    assert items.parts() == [expected] and list(items) == expected  # one ready list, read without moving
    for stop_at in (1, 2, 4):
        items = parts_of_three()
        told: list[int] = []

        def go_on(told: list[int] = told, stop_at: int = stop_at) -> bool:
            told.append(1)
            return len(told) < stop_at

        assert items.placed_unless_stopped(go_on, 4) is False
        assert len(told) == stop_at and len(items.parts()) == 10  # left as it was
        assert list(items) == expected
    ordered = SortedOnRead(parts_of_three(), key=lambda i: -i)
    assert ordered.sorted_unless_stopped(lambda: False, 4) is False and ordered.contents()[1] is False
    assert ordered.sorted_unless_stopped(lambda: True, 4) is True and ordered.contents() == (expected[::-1], True)


def test_a_long_recorded_part_is_moved_a_slice_at_a_time() -> None:
    """One part longer than the slice (a 5,000-statement block's values) asks between its slices too."""

    def one_long_part() -> Segments[int]:
        items = Segments([1])
        items.add_moved(tuple(range(2, 12)), lambda factor, i: i * factor, 10)  # ten items
        items.add_moved((12,), lambda factor, i: i * factor, 10)
        return items

    expected = list(one_long_part())
    asked: list[int] = []
    items = one_long_part()
    assert items.placed_unless_stopped(lambda: asked.append(1) is None, 4) is True
    # 1 + 4 moved, asked; 4 more, asked; the last 2 and the next part's 1: fewer than 4 since, not asked
    assert len(asked) == 2 and items.parts() == [expected]
    for stop_at in (1, 2):
        items = one_long_part()
        told: list[int] = []

        def go_on(told: list[int] = told, stop_at: int = stop_at) -> bool:
            told.append(1)
            return len(told) < stop_at

        assert items.placed_unless_stopped(go_on, 4) is False
        assert len(told) == stop_at and len(items.parts()) == 3  # left as it was
        assert list(items) == expected


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ready", "moved", "moved, keys given", "moved, keys and unmoved given"]),
            st.lists(st.integers(0, 6), max_size=5),
        ),
        max_size=8,
    ),
    st.lists(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 6)), max_size=5), max_size=5),
    st.integers(-2, 220),
    st.integers(0, 60),
)
def test_a_window_of_parts_in_order_then_parts_out_of_order_is_what_sorting_all_gives(
    in_order: list[tuple[str, list[int]]], late: list[list[tuple[int, int]]], low: int, width: int
) -> None:
    """The first parts in order one after another (read as an ordered list's), the part closed, then parts in
    any order (a draft's checks, then those of claims that waited for names below): windows as sorted."""

    def move(delta: int, item: Spanned) -> Spanned:
        return (item[0] + delta, item[1] + delta, item[2])

    items: Segments[Spanned] = Segments()
    everything: list[Spanned] = []  # the items as moved (iterating ``items`` would join its parts)
    start, tag = 0, 0
    for kind, steps in in_order:
        recorded = []
        for step in steps:  # keys never decrease, across parts too
            start += step
            recorded.append((start - 3, start - 3 + step, tag))  # recorded 3 before, moved by 3
            tag += 1
        everything += [move(3, item) for item in recorded]
        if kind == "ready":
            items.extend([move(3, item) for item in recorded])
            continue
        keys = (recorded[0][0] + 3, recorded[-1][0] + 3) if "keys" in kind and recorded else None
        unmoved = (lambda item: item) if "unmoved" in kind else None
        items.add_moved(tuple(recorded), move, 3, keys, unmoved)
    items.close_part()
    in_order_parts = items.ordered_parts()
    for spans in late:
        recorded = tuple((s, s + length, tag + n) for n, (s, length) in enumerate(spans))
        everything += recorded
        items.add_moved(recorded, move, 0)
        tag += len(spans)
    high = low + width
    expected = [item for item in sorted(everything, key=lambda item: item[0]) if low <= item[0] < high]
    assert items.ordered_parts() == in_order_parts >= 1  # adding parts after them does not change it
    for placed in (True, False):
        ordered = SortedOnRead(items, key=lambda item: item[0])
        found = ordered.window(low, high, placed)
        if placed:
            assert found == expected
        else:
            assert sorted(item[2] for item in found) == sorted(item[2] for item in expected)


def test_the_checks_added_before_the_first_out_of_order_are_counted_as_parts_in_order() -> None:
    """A draft whose claims wait for names below: its checks come out of order; the parts before the first
    such check are the ordered prefix a window reads as an ordered list's."""
    from scaling_core import analyze_document
    from scaling_core.document import analysis as analysis_module
    from scaling_core.document.effects import Results

    text = "It takes 4 s<!-- = t -->.\n\n```calc\nx = 3\ny = x * 2\nt = 4 s\n```\n\nSo x is 3<!-- = x --> and y 6<!-- = y -->.\n"
    seen: list[Results] = []
    original = analysis_module._checks

    def keeping(results: Results, *args: object) -> object:
        seen.append(results)
        return original(results, *args)  # type: ignore[arg-type]

    with patch.object(analysis_module, "_checks", keeping):
        analysis = analyze_document(text)
    results = seen[0]
    assert not results.checks_in_order and results.checks.ordered_parts() >= 1
    before = [c for part in results.checks.parts()[: results.checks.ordered_parts()] for c in part]
    assert [c.claim for c in before] == ["3", "6"]  # x's and y's, in order
    assert min(c.span.start for c in analysis.checks) < before[0].span.start  # t's, which waited: after them


def test_joining_the_parts_forgets_which_were_in_order() -> None:
    """Read whole (its parts joined into one), a list's first parts are no longer known to be in order."""
    items: Segments[int] = Segments([1, 2])
    items.close_part()
    items.extend([0])
    assert items.ordered_parts() == 1
    assert list(items) == [1, 2, 0]
    assert items.ordered_parts() == 0
    assert SortedOnRead(items, key=lambda item: item).window(0, 2, placed=True) == [0, 1]
