"""The editor's lookups answer as a scan of the whole analysis would, without scanning it per question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.corpus import book_like
from bench.shapes import dense, forward, giant
from scaling_core import DocumentAnalysis, analyze_document
from scaling_core.document import lookup
from scaling_core.document.derivation import derivation_at
from scaling_core.document.incremental import RegionCache
from scaling_core.document.results import Binding
from scaling_core.queries.hover import hover_at
from scaling_core.queries.navigation import binding_at
from tests.core.test_problems_and_settings import NESTED_PROBLEMS

BOOK = book_like(300)
# Problems with local names, a claim reading a name defined below, an import-free forward reference.
PROBLEMS = """\
```calc
B = 64
```

**Question 1:** What is B?

```calc
B = 128
t = B * 2
```

**Answer:** `t = 256`, and the top-level B is not this one.

**Question 2:** And now?

It is 64<!-- = B -->, and 20<!-- = late --> comes from below.

```calc
late = 20
x = B + late
```
"""


def scan_holding(items: Sequence[Any], offset: int, accept: Any = None) -> Any:
    return next((i for i in items if i.span.contains(offset) and (accept is None or accept(i))), None)


def scan_scope(analysis: DocumentAnalysis, start: int, low: int, high: int) -> dict[str, Binding]:
    """The scope as derivations built it before the index (the specification)."""
    problem = analysis.problem_at(start)
    scope = {name: b for name, b in analysis.exports.items() if b.path != analysis.path}
    for binding in analysis.bindings:
        inside = analysis.problem_at(binding.span.start)
        if binding.span.start < start and (inside is None or inside is problem):
            scope[binding.name] = binding
    for reference in analysis.references:
        if low <= reference.span.start < high and reference.binding is not None:
            scope[reference.name] = reference.binding
    return scope


def test_what_holds_each_offset_is_what_a_scan_finds() -> None:
    for text in (BOOK, PROBLEMS, forward(300), giant(400, 200)):
        analysis = analyze_document(text, "x.md")
        kinds = [
            (lookup.values_index(analysis), analysis.values),
            (lookup.checks_index(analysis), analysis.checks),
            (lookup.bindings_index(analysis), analysis.bindings),
            (lookup.references_index(analysis), analysis.references),
        ]
        for offset in range(0, len(text) + 1, 3):
            for index, items in kinds:
                assert index.first_holding(offset) is scan_holding(items, offset)
            expr = lookup.values_index(analysis).first_holding(offset, lambda v: v.written)
            assert expr is scan_holding(analysis.values, offset, lambda v: v.written)
        for start in range(0, len(text), 97):
            window = [v for v in analysis.values if start <= v.span.end <= start + 500]
            assert lookup.values_index(analysis).ending_between(start, start + 500) == window


def edited_versions(text: str, edits: int = 4) -> list[DocumentAnalysis]:
    """Analyses of ``text`` after characters typed at a few places, each re-using the last (replayed parts)."""
    cache, lines, analyses = RegionCache(), text.split("\n"), []
    analyze_document(text, "x.md", cache=cache)
    for number in range(edits):
        lines[len(lines) * (number * 2 + 1) // (edits * 2 + 1)] += " x"
        analyses.append(analyze_document("\n".join(lines), "x.md", cache=cache))
    return analyses


def test_after_edits_each_index_answers_as_a_scan_of_the_whole_list() -> None:
    for text in (BOOK, PROBLEMS, forward(600), giant(800, 400), dense(400, paragraph_lines=20)):
        for analysis in edited_versions(text):
            whole = len(analysis.text)
            kinds = [
                (lookup.values_index(analysis), list(analysis.values)),
                (lookup.checks_index(analysis), list(analysis.checks)),
                (lookup.references_index(analysis), list(analysis.references)),
            ]
            for index, items in kinds:
                for offset in range(0, whole + 1, 13):
                    assert index.first_holding(offset) == scan_holding(items, offset)
                for start in range(0, whole, 211):
                    assert index.ending_between(start, start + 400) == [
                        i for i in items if start <= i.span.end <= start + 400
                    ]
                    assert index.starting_between(start, start + 400) == [
                        i for i in items if start <= i.span.start < start + 400
                    ]


def test_a_window_of_a_long_draft_moves_only_the_items_near_it() -> None:
    for text in (giant(6_000, 3_000), dense(3_000, paragraph_lines=50)):
        analysis = edited_versions(text, edits=1)[0]
        middle = len(analysis.text) // 2
        for name in ("values", "checks", "references"):
            items = getattr(analysis, name)
            if not items:
                continue
            index = lookup.SpanIndex(items)
            index.ending_between(middle, middle + 500)
            moved = sum(block.spans().items.__len__() for block in index._blocks if block._sorted is not None)
            recorded = [part for part in items.parts() if type(part) is not list]
            assert recorded, name  # the edit near the top left the rest as recorded parts, not moved
            assert moved <= min(2 * lookup.BOUNDS_STEP, len(items) // 2), name


def test_the_definitions_visible_at_an_offset_are_what_a_scan_builds() -> None:
    for text in (BOOK, PROBLEMS, forward(300)):
        analysis = analyze_document(text, "x.md")
        for value in analysis.values:
            if not value.written:
                continue
            low, high = value.span.start, value.span.end
            overrides: dict[str, Binding] = {}
            for reference in lookup.references_index(analysis).starting_between(low, high):
                if reference.binding is not None:
                    overrides[reference.name] = reference.binding
            visible = lookup.VisibleScope(analysis, value.span.start, overrides)
            expected = scan_scope(analysis, value.span.start, low, high)
            assert dict(visible) == expected
            assert all(visible.get(name) is binding for name, binding in expected.items())


class Counting(list):  # type: ignore[type-arg]
    """A list that counts the items read from it."""

    reads = 0

    def __iter__(self) -> Any:
        for item in super().__iter__():
            Counting.reads += 1
            yield item


def test_small_replayed_regions_are_joined_into_blocks_of_a_few_dozen_items() -> None:
    analysis = edited_versions(BOOK, edits=1)[0]  # the regions after the edit: recorded parts of a few items
    twin = edited_versions(BOOK, edits=1)[0]  # read whole (which moves every part into place) for the answers
    for name in ("values", "references"):
        items, every = getattr(analysis, name), list(getattr(twin, name))
        for block in lookup.SpanIndex(items)._blocks:
            sizes = [end - first for _items, first, end, _move, _delta in block.stretches]
            assert len(sizes) == 1 or sum(sizes) <= lookup.JOINED_AT_MOST, name
        most = 0
        for offset in range(0, len(analysis.text), len(analysis.text) // 40):
            index = lookup.SpanIndex(items)
            found = [(i.span, i.name) for i in index.holding(offset)]
            assert found == [(i.span, i.name) for i in every if i.span.start <= offset <= i.span.end]
            most = max(most, sum(len(b.spans().items) for b in index._blocks if b._sorted is not None))
        # What a hover there asks moves the block around it into place (up to 256 items before: ~125 here).
        assert 0 < most <= lookup.JOINED_AT_MOST < lookup.BOUNDS_STEP, (name, most)


def test_a_hover_reads_a_handful_of_items_once_the_indexes_are_built() -> None:
    text = giant(2_000, 1_000)
    analysis = analyze_document(text, "x.md")
    offsets = [text.index("t_100 = ") + 1, text.index("flops_200 = ") + 2, text.index(" µs<!-- ≈ t_") - 2]
    before = [hover_at(analysis, offset) for offset in offsets]
    for name in ("values", "checks", "bindings", "references"):
        setattr(analysis, name, Counting(getattr(analysis, name)))
    Counting.reads = 0
    after = [hover_at(analysis, offset) for offset in offsets]
    assert after == before and all(before)
    assert [binding_at(analysis, offset) for offset in offsets] == [
        scan_holding(analysis.bindings, o) or getattr(scan_holding(analysis.references, o), "binding", None)
        for o in offsets
    ]
    Counting.reads = 0
    for offset in offsets:
        derivation_at(analysis, offset)
        binding_at(analysis, offset)
    assert Counting.reads < 50  # not the ~4,000 definitions and values a scan reads per hover


def test_a_prepared_analysis_answers_hovers_without_building_anything() -> None:
    from functools import partial

    from scaling_core.queries.coverage import definition_coverage
    from scaling_core.queries.hover import prepare_hover

    text = book_like(600)
    offsets = [text.index("t_3 = ") + 1, text.index("flops_5 = ") + 2, text.index(" µs<!-- ≈ t_4") - 2]
    fresh = analyze_document(text, "x.md")
    expected = [hover_at(fresh, offset, partial(definition_coverage, fresh)) for offset in offsets]
    analysis = analyze_document(text, "x.md")
    prepare_hover(analysis)
    for name in ("values", "checks", "bindings", "references"):
        setattr(analysis, name, Counting(getattr(analysis, name)))
    Counting.reads = 0
    assert [hover_at(analysis, offset, partial(definition_coverage, analysis)) for offset in offsets] == expected
    assert "Tested by" in (expected[0] or "") or "No problem tests" in (expected[0] or "")
    assert Counting.reads < 50  # what a hover reads is built: not the ~1,000 values and definitions again


def test_preparing_stops_where_the_draft_changed_and_asks_nothing_after() -> None:
    from scaling_core.queries.hover import prepare_hover

    text = book_like(100)
    asked_in_all: list[int] = []
    assert prepare_hover(analyze_document(text, "x.md"), lambda: asked_in_all.append(1) is None) is True
    assert len(asked_in_all) > 7  # between the parts, and inside them
    for stop_at in range(1, len(asked_in_all) + 1):
        analysis = analyze_document(text, "x.md")
        asked: list[int] = []

        def go_on(asked: list[int] = asked, stop_at: int = stop_at) -> bool:
            asked.append(1)
            return len(asked) < stop_at  # the draft changes here

        assert prepare_hover(analysis, go_on) is False
        assert len(asked) == stop_at  # never asked again once it said no
        assert stop_at > 1 or not analysis.lookups  # told at once: nothing built
        assert prepare_hover(analysis) is True and len(analysis.lookups) > 2


def test_an_index_is_prepared_a_block_at_a_time_until_the_draft_changes() -> None:
    from scaling_core.document.lookup import values_index

    analysis = edited_versions(book_like(2_000), edits=1)[0]  # replayed parts: blocks moved into place when sorted
    index = values_index(analysis)
    blocks = index._blocks
    assert len(blocks) > 3
    asked: list[int] = []

    def go_on() -> bool:
        asked.append(sum(block._sorted is not None for block in blocks))
        return len(asked) <= 2  # the draft changes while the second block is sorted

    assert index.prepare(go_on) is False
    assert asked == [0, 1, 2]  # asked before each block, never again once it said no
    assert [block._sorted is not None for block in blocks[:3]] == [True, True, False]
    assert index.prepare() is True and all(block._sorted is not None for block in blocks)


def test_a_part_added_with_bounds_that_do_not_fit_its_items_is_moved_whole() -> None:
    from scaling_core.document.results import Reference
    from scaling_core.document.segments import Segments
    from scaling_core.text import Span

    items = [Reference.at(Span(n * 10, n * 10 + 3), f"x{n}", None) for n in range(600)]
    segments: Segments[Reference] = Segments()
    segments.add_moved(items, lambda _delta, item: item, 0, bounds=(0, 2_563))  # one start and end: 256 items' bounds
    index = lookup.SpanIndex(segments)
    assert index.first_holding(5_001) is items[500]
    assert index.ending_between(3_000, 3_013) == items[300:302]


def test_a_reference_is_where_its_span_said_moved_or_not() -> None:
    from scaling_core.document.results import Reference
    from scaling_core.text import Span

    plain = Reference.at(Span(40, 47), "flops_2", None)
    assert plain.stop is None and plain.span == Span(40, 47)  # its end is its name's: not kept
    read_from_math = Reference.at(Span(40, 52), "B", None)  # a span wider than its name is kept whole
    assert read_from_math.span == Span(40, 52)
    assert plain.moved(-5, None).span == Span(35, 42) and read_from_math.moved(8, None).span == Span(48, 60)
    text = "# T\n\n```calc\nflops_2 = 3\nt = flops_2 * 2\n```\n\nIt is 6<!-- = t * 1 -->.\n"
    found = analyze_document(text, "r.md").references
    assert [(r.name, text[r.span.start : r.span.end]) for r in found] == [("flops_2", "flops_2"), ("t", "t")]


def test_a_definition_is_where_its_span_said_moved_or_not_and_holds_no_span_object() -> None:
    import gc

    from scaling_core.document.shift import move_each
    from scaling_core.text import Span

    defined = Binding.at("x", None, Span(12, 21), "d.md", True, "3 GB")
    assert (defined.start, defined.end, defined.span) == (12, 21, Span(12, 21))
    (moved,) = move_each([(defined, 4)], 1)
    assert moved.span == Span(17, 26) and (moved.name, moved.source, moved.path) == ("x", "3 GB", "d.md")
    assert move_each([(defined, 0)]) == [defined] and move_each([(defined, 0)])[0] is defined  # not moved: itself
    assert not any(isinstance(held, Span) for held in gc.get_referents(defined) + gc.get_referents(moved))
    text = "# T\n\n```calc\nflops_2 = 3\nt = flops_2 * 2\n```\n\nIt is 6<!-- = t * 1 -->.\n"
    found = analyze_document(text, "r.md", cache=RegionCache()).bindings
    assert [text[b.span.start : b.span.end] for b in found] == ["flops_2", "t"]  # where each name is defined


def test_values_and_checks_are_where_written_moved_or_not_and_hold_no_span_object() -> None:
    import gc

    from scaling_core.document.results import CheckKind, CheckResult, CheckStatus, ValueResult
    from scaling_core.document.shift import move_check, move_value
    from scaling_core.text import Span

    value = ValueResult.at(Span(30, 39), None, None, "t", written=True)
    check = CheckResult.at(CheckKind.CLAIM, Span(50, 64), CheckStatus.PASS, "=", "6", None, None, left="t")
    assert (value.start, value.end, value.span) == (30, 39, Span(30, 39)) and check.span == Span(50, 64)
    moved_value, moved_check = move_value(5, value), move_check(-7, check)
    assert moved_value.span == Span(35, 44) and (moved_value.name, moved_value.written) == ("t", True)
    assert moved_check.span == Span(43, 57) and (moved_check.kind, moved_check.left) == (CheckKind.CLAIM, "t")
    for result in (value, check, moved_value, moved_check):
        assert not any(isinstance(held, Span) for held in gc.get_referents(result))
    text = "# T\n\n```calc\nflops_2 = 3\nt = flops_2 * 2\n```\n\nIt is 6<!-- = t * 1 -->.\n"
    cache = RegionCache()
    analyze_document(text, "v.md", cache=cache)
    moved_text = "Typed above.\n" + text  # replayed: the results are moved
    for analysis, written in (
        (analyze_document(text, "v.md"), text),
        (analyze_document(moved_text, "v.md", cache=cache), moved_text),
    ):
        assert [written[v.start : v.end] for v in analysis.values] == ["flops_2 = 3", "t = flops_2 * 2"]
        assert [written[c.start : c.end] for c in analysis.checks] == ["6"]  # a claim's check is its number
        index = lookup.checks_index(analysis)
        assert index.first_holding(analysis.checks[0].start + 1) is analysis.checks[0]


def test_a_plain_list_is_indexed_as_a_list_once_lists_were_seen_as_sequences() -> None:
    # Compiled (mypyc), Segments and SortedOnRead share the ABC cache of ``Sequence``: once a list has been
    # checked to be a Sequence, ``isinstance(a_list, SortedOnRead)`` says yes (CI's compiled run).
    from collections.abc import Sequence as AbstractSequence

    analysis = analyze_document(PROBLEMS, "x.md")
    assert isinstance(list(analysis.bindings), AbstractSequence)
    index = lookup.SpanIndex(list(analysis.bindings))
    first = analysis.bindings[0]
    assert index.first_holding(first.span.start) is first


def test_a_hover_on_a_draft_without_problems_moves_nothing_to_say_what_tests_a_definition() -> None:
    from scaling_core.queries.coverage import definition_coverage
    from scaling_core.queries.coverage_model import ConceptStatus

    text = giant(2_000, 1_000)
    cache = RegionCache()
    analyze_document(text, "x.md", cache=cache)
    text = "Typed above.\n" + text  # every later part is replayed, still as recorded
    analysis = analyze_document(text, "x.md", cache=cache)
    concept = definition_coverage(analysis, text.index("t_100 = "))
    assert concept is not None and concept.status == ConceptStatus.UNTESTED and not concept.problems
    for results in (analysis.references, analysis.values, analysis.checks):
        assert any(type(part) is not list for part in results.parts())  # type: ignore[attr-defined]


def test_the_position_of_the_problem_holding_an_offset_is_the_first_holding_it() -> None:
    from scaling_core.text import holding_position

    for text in (PROBLEMS, BOOK, NESTED_PROBLEMS):
        problems = analyze_document(text, "x.md").problems
        position = holding_position(problems)
        for offset in range(-1, len(text) + 2):
            first = next((i for i, p in enumerate(problems) if p.span.start <= offset < p.span.end), -1)
            assert position(offset) == first
    assert holding_position([])(5) == -1
