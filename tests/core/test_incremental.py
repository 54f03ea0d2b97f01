"""Incremental analysis equals a full re-analysis, whatever the edits."""

from __future__ import annotations

import contextlib
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import AnalysisCancelled, DocumentAnalysis, analyze_document
from scaling_core.document import driver as driver_module
from scaling_core.document.incremental import RegionCache, fingerprint
from tests.core.test_robustness import FRAGMENTS

BASE = """# Chapter

```calc
B = 128
D = 8192
t = 2 * B * D * 8192 / h100.flops_bf16
```

About 17 µs<!-- ≈ t -->, and `2 * 3 = 6`, and {calc}`t -> us`.

## Problems

**Question 1 [local]:** with a local B:

```calc
B = 64
x = B * 2
x == 128
```

## More

<!-- margin: off -->
`2 * 2 = 5`
<!-- margin: on -->

`B * 2 = 256` and the end, and again `2 * 3 = 6` and `B * 2 = 256`.
"""


def observable(analysis: DocumentAnalysis) -> tuple:
    """Everything an analysis reports, minus what legitimately differs for replayed results (their tree)."""
    return (
        list(analysis.diagnostics),
        [(v.span, v.display, v.name, v.inline, fingerprint(v.quantity)) for v in analysis.values],
        [
            (
                c.kind,
                c.span,
                c.status,
                c.op,
                c.claim,
                fingerprint(c.computed),
                c.computed_display,
                c.message,
                c.problem,
                fingerprint(c.claimed),
                c.allowance,
            )
            for c in analysis.checks
        ],
        list(analysis.problems),
        [(b.name, b.span, b.source, fingerprint(b.value)) for b in analysis.bindings],
        [(r.span, r.name, r.binding.span if r.binding else None) for r in analysis.references],
    )


#: MARGIN_HYPOTHESIS_EXAMPLES=1000 runs the property tests below longer (by hand, after changing the engine).
EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))

edits = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 12), st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6))),
    min_size=1,
    max_size=12,
)


@settings(max_examples=EXAMPLES or 150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits)
def test_random_edit_sequences_match_a_full_reanalysis(sequence: list[tuple[float, int, str]]) -> None:
    assert_edits_match_a_full_reanalysis(BASE, sequence)


def assert_edits_match_a_full_reanalysis(base: str, sequence: list[tuple[float, int, str]]) -> None:
    """Apply each (where, remove, insert) edit to ``base``; after each, the cached analysis equals a full one."""
    cache = RegionCache()
    text = base
    analyze_document(text, "draft.md", cache=cache)
    for where, remove, insert in sequence:
        position = int(where * len(text))
        text = text[:position] + insert + text[position + remove :]
        incremental = analyze_document(text, "draft.md", cache=cache)
        assert observable(incremental) == observable(analyze_document(text, "draft.md"))


@settings(max_examples=EXAMPLES or 100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits, st.lists(st.integers(0, 30), min_size=12, max_size=12))
def test_analyses_stopped_part_way_leave_the_cache_correct(
    sequence: list[tuple[float, int, str]], stops: list[int]
) -> None:
    # As in the editor: a newer version arrives while the previous one is being analysed.
    saved, driver_module.STOP_POLL_REGIONS = driver_module.STOP_POLL_REGIONS, 1
    try:
        cache = RegionCache()
        text = BASE
        analyze_document(text, "draft.md", cache=cache)
        for (where, remove, insert), stop in zip(sequence, stops):
            position = int(where * len(text))
            text = text[:position] + insert + text[position + remove :]
            polls = iter(range(stop, -1, -1))
            with contextlib.suppress(AnalysisCancelled):
                analyze_document(
                    text + "\nmore `1 + 1 = 2`\n",
                    "draft.md",
                    cache=cache,
                    cancelled=lambda polls=polls: next(polls, 0) == 0,
                )
            incremental = analyze_document(text, "draft.md", cache=cache)
            assert observable(incremental) == observable(analyze_document(text, "draft.md"))
    finally:
        driver_module.STOP_POLL_REGIONS = saved


def test_a_cancelled_analysis_raises_and_keeps_its_work() -> None:
    cache = RegionCache()
    analyze_document(BASE, "draft.md", cache=cache)
    polls = []
    edited = BASE.replace("D = 8192", "D = 4096")
    try:
        analyze_document(edited, "draft.md", cache=cache, cancelled=lambda: polls.append(1) or len(polls) > 1)
    except AnalysisCancelled:
        pass
    else:
        raise AssertionError("not cancelled")
    assert len(polls) == 2  # the chunk parse was allowed, the first region poll stopped it
    analyze_document(edited, "draft.md", cache=cache)
    assert cache.chunks.parsed == 0  # the stopped analysis's chunk scan was kept


def test_a_region_repeated_in_one_draft_is_evaluated_once() -> None:
    cache = RegionCache()
    first = analyze_document(BASE, "draft.md", cache=cache)
    assert cache.reused == 2  # the second `2 * 3 = 6` and `B * 2 = 256`, replayed at their own places
    assert observable(first) == observable(analyze_document(BASE, "draft.md"))


def test_an_edit_reevaluates_only_the_changed_region_and_its_dependents() -> None:
    cache = RegionCache()
    analyze_document(BASE, "draft.md", cache=cache)
    total = cache.evaluated + cache.reused
    analyze_document(BASE.replace("D = 8192", "D = 4096"), "draft.md", cache=cache)
    # the first block, the claim and the inline value use t; nothing else reads D or t
    assert cache.evaluated == 3 and cache.reused == total - 3
    assert cache.chunks.parsed == 1


def test_chunked_extraction_equals_one_pass_even_across_fences_and_comments() -> None:
    from scaling_core.document.extract import all_regions, extract
    from scaling_core.document.incremental import ChunkCache

    text = (
        "# A\n\n```\n\n# not a heading\n```\n\n<!--\n\n# nor this\n-->\n\n"
        "```calc\nx = 1\n\n# inside an unclosed fence\n\n# B\ntext `1 + 1 = 2`\n"
    )
    cache = ChunkCache()
    cache.begin()
    chunked = extract(text, cache=cache)
    whole = extract(text)
    assert all_regions(chunked, cache) == whole.regions and chunked.diagnostics == whole.diagnostics


def test_did_you_mean_notes_follow_names_defined_elsewhere() -> None:
    # The note on an unknown name lists similar names in scope, which the region itself does not mention.
    cache = RegionCache()
    before = "```calc\nspeed = 1\n```\n\n## Later\n\n```calc\nx = sped\n```\n"
    analyze_document(before, "draft.md", cache=cache)
    after = before.replace("speed = 1", "speed = 1\nspeeds = 2")
    incremental = analyze_document(after, "draft.md", cache=cache)
    full = analyze_document(after, "draft.md")
    assert [d.notes for d in full.diagnostics] == [("did you mean 'speed' or 'speeds'?",)]
    assert observable(incremental) == observable(full)
    assert [d.notes for d in incremental.diagnostics] == [d.notes for d in full.diagnostics]


def test_an_analysis_leaves_no_reference_cycles() -> None:
    # Cycles keep every result list alive until the collector runs: long pauses in the server.
    import gc

    cache = RegionCache()
    analyze_document(BASE, "draft.md", cache=cache)
    gc.collect()
    gc.disable()
    try:
        analysis = analyze_document("# More\n\n" + BASE + "`nope * 2 = 4`\n", "draft.md", cache=cache)
        assert analysis.checks
        del analysis
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_replayed_region_takes_the_problem_it_now_sits_in() -> None:
    # Found by the long mutation fuzz run: a broken marker (`-->` made `--`>`) nests two
    # problems; a region replayed from the cache must land in the same problem as in a full run.
    before = (
        "```calc\n```\n<!-- problem: critical-intensity -->\n<!-- /problem -->\n<!-- problem: memory-bound -->\n"
        "```calc\n```\n<!-- /problem -->\n\n## At the critical batch: B = 256\n```calc\nroof2 ≈ 35 us\n```\n"
        "<!-- /problem -->"
    )
    after = before.replace("intensity -->", "intensity --`>")
    cache = RegionCache()
    analyze_document(before, "d.md", cache=cache)
    incremental = analyze_document(after, "d.md", cache=cache)
    full = analyze_document(after, "d.md")
    assert [c.problem for c in incremental.checks] == [c.problem for c in full.checks]


def test_a_region_key_keeps_the_text_the_region_holds_not_a_second_copy() -> None:
    from scaling_core.document.incremental import read_once
    from scaling_core.document.regions import CalcRegion, ClaimRegion, CodeSpanRegion

    text = "".join(
        f"## S{n}\n\n```calc\nx_{n} = {n} * 2\n```\n\n"
        f"So `x_{n} * 3 = {6 * n}` holds, {{calc}}` x_{n} `, {2 * n}<!-- = x_{n} -->.\n\n"
        for n in range(40)
    )
    cache = RegionCache()
    assert not analyze_document(text, "keys.md", cache=cache).diagnostics
    regions = [region for _text, _start, scan in cache.chunks._entries.values() for region in scan.regions]
    keys = list(cache._entries)
    # A code span's key holds the very string the code span keeps (not a slice with its backticks), where it
    # lies and how long the code span is: what its evaluation reads.
    spans = {id(region.text): region for region in regions if type(region) is CodeSpanRegion}
    span_keys = [key for key in keys if key[0] is CodeSpanRegion]
    assert len(spans) == len(span_keys) == 80
    for key in span_keys:
        region = spans[id(key[1])]
        assert key[1:5] == (region.text, region.content_offset, region.length, region.role)
        assert read_once(key[1].encode().decode())[0] is key[1]  # the string the names memo holds
    assert sorted(key[1] for key in span_keys if key[4]) == sorted(f"x_{n}" for n in range(40))  # the roles
    # A claim's holds its text as the memo keeps it: equal text read again is that same string.
    claim_keys = [key for key in keys if key[0] is ClaimRegion]
    assert len(claim_keys) == 40
    assert all(
        read_once(key[1].encode().decode())[0] is key[1] and key[2].strip() == key[1].split()[-2] for key in claim_keys
    )
    # A calc block's key holds its lines as written: the very string the block keeps, and where they lie in it.
    blocks = [region for region in regions if type(region) is CalcRegion]
    written = {id(block.content): block for block in blocks}
    calc_keys = [key for key in keys if key[0] is CalcRegion]
    assert len(blocks) == len(calc_keys) == 40
    for _kind, content, first, end, hidden, *_rest in calc_keys:
        block = written[id(content)]
        assert block.content is content and content.startswith("x_") and not hidden
        assert (first, end) == (block.first - block.span.start, block.span.end - block.span.start)
        assert (first, end) == (len("```calc\n"), len(f"```calc\n{content}\n```"))


def test_a_code_span_edited_outside_its_text_is_replayed_and_inside_it_evaluated_again() -> None:
    """A code span's key is its text, where the text lies and how long the code span is: other backticks and
    spaces around the same text at the same place replay it; any other change evaluates it again, and each
    answers as a fresh analysis."""
    before = "# D\n\n```calc\nx = 3\n```\n\nSo `x * 2 = 6` and {calc}`x * 2`.\n"
    cache = RegionCache()
    analyze_document(before, "d.md", cache=cache)
    for written, evaluated in (
        ("`` x * 2 = 6 ``", 1),  # the text lies further in: evaluated again
        ("`  x * 2 = 6  `", 0),  # as far in and as long: replayed
        ("`  x * 2 = 7  `", 1),
        ("`  x*2 = 6    `", 1),
    ):
        after = before.replace("`x * 2 = 6`", written)
        incremental = analyze_document(after, "d.md", cache=cache)
        assert cache.evaluated == evaluated, written
        full = analyze_document(after, "d.md")
        assert [(c.span, c.status, c.message) for c in incremental.checks] == [
            (c.span, c.status, c.message) for c in full.checks
        ]
        assert [(v.span, v.display) for v in incremental.values] == [(v.span, v.display) for v in full.values]
        assert [(d.code, d.span) for d in incremental.diagnostics] == [(d.code, d.span) for d in full.diagnostics]
    roleless = analyze_document(before.replace("{calc}`x * 2`", "`x * 2`"), "d.md", cache=cache)
    assert cache.evaluated == 0 and [v.name for v in roleless.values] == ["x"]  # no role, no `=`: not a region


def test_fingerprints_are_equal_exactly_when_values_are() -> None:
    """Equal fingerprints, equal values: a float stands for itself, and what its equality would blur (zeros'
    signs, NaN) or what is no plain float (integers, arrays) by its bytes; dimension, inference and label count."""
    import numpy as np

    from scaling_core.units.quantity import Quantity

    values = [
        Quantity(2.5), Quantity(2.5, 1), Quantity(2.5, 0, True), Quantity(2.5, 0, False, "token"), Quantity(-2.5),
        Quantity(0.0), Quantity(-0.0), Quantity(float("nan")), Quantity(float("inf")), Quantity(float("-inf")),
        Quantity(np.array([1.0, 2.0])), Quantity(np.array([1.0, 3.0])), None,
    ]  # fmt: skip
    prints = [fingerprint(value) for value in values]
    for i, first in enumerate(prints):
        for j, second in enumerate(prints):
            assert (first == second) == (i == j), (values[i], values[j])
    again = [fingerprint(value) for value in [Quantity(2.5), Quantity(-0.0), Quantity(float("nan")), Quantity(3)]]
    assert again[:3] == [prints[0], prints[6], prints[7]] and again[3] == fingerprint(Quantity(3))
    shared = Quantity(1e9)
    assert fingerprint(shared)[0] is shared.value  # type: ignore[index]  # the float itself, not a copy of its bytes


def test_an_edit_in_a_code_span_of_a_hidden_calc_comment_is_evaluated_again() -> None:
    """An unclosed ``<!-- calc`` reads the rest of the draft, its code spans masked: an edit inside one of them
    changes what the block's statements are (read from the draft), so its recorded effects must not be replayed
    (found by the mutation fuzzer: the block's masked text was its cache key, and it had not changed)."""
    before = "<!-- calc\nx = 1\nrun `margin check examples/` to see.\n"
    after = before.replace("margin check", "marg000000ck")
    cache = RegionCache()
    analyze_document(before, "d.md", cache=cache)
    incremental, full = analyze_document(after, "d.md", cache=cache), analyze_document(after, "d.md")
    assert [d.message for d in incremental.diagnostics] == [d.message for d in full.diagnostics]
    assert any("marg000000ck" in d.message for d in full.diagnostics)
