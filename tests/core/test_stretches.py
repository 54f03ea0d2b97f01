"""Stretches (issue 15): consecutive unchanged runs replayed as one, so a keystroke costs a few of them.

A stretch holds while its chunks are the same, no problem starts or ends in
it, and the names it mentions mean at its start what they meant: each test
breaks one of these and checks the result against a full analysis.
"""

from __future__ import annotations

import pytest

from scaling_core import analyze_document
from scaling_core.document import stretches
from scaling_core.document.incremental import RegionCache
from tests.core.test_forward_reuse import forward_draft
from tests.core.test_incremental import observable


def typed(text: str, at: str, times: int) -> list[str]:
    """``times`` versions of ``text``, each with one more character typed after ``at``."""
    versions = []
    for _ in range(times):
        text = text.replace(at, at + "x", 1)
        at += "x"
        versions.append(text)
    return versions


def runs_looked_up(text: str, versions: list[str]) -> list[int]:
    """Runs looked up one by one for each version (after ``text``), each checked against a full analysis."""
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    analyze_document(text, "draft.md", cache=cache)
    counts = []
    for version in versions:
        incremental = analyze_document(version, "draft.md", cache=cache)
        counts.append(cache.runs)
        assert observable(incremental) == observable(analyze_document(version, "draft.md"))
    return counts


def assert_typing_looks_up_a_few_runs(small: str, large: str, at: str) -> None:
    """Typing after ``at`` looks up as few runs in ``large`` as in ``small`` (a few) once past the first keystroke."""
    small_counts = runs_looked_up(small, typed(small, at, 3))
    large_counts = runs_looked_up(large, typed(large, at, 3))
    # The first keystroke replays the runs around the edit one by one; the next ones, a few stretches.
    assert large_counts[1:] == small_counts[1:]
    assert max(large_counts[1:]) <= 2


def test_typing_looks_up_a_few_runs_whatever_the_length_of_the_draft() -> None:
    assert_typing_looks_up_a_few_runs(forward_draft(8), forward_draft(64), "So a step is")


def test_edits_moving_around_the_draft_match_a_full_analysis() -> None:
    text = forward_draft(24)
    versions = []
    for section in (20, 3, 12, 20, 0, 23):  # each cuts a stretch of the previous edit in two
        for version in typed(text, f"## Step {section}\n\nAt", 2):
            versions.append(version)
        text = versions[-1]
        versions.append(text.replace(f"B_{section} = ", f"B_{section} = 1", 1))
        text = versions[-1]
    runs_looked_up(forward_draft(24), versions)


SHARED = """\
# Shared sizes

```calc
D = 8192
```

"""

READER = "Part {i}: a row of D is `D * 2 byte = 16384 byte` and a claim reads it: 8192<!-- = D -->.\n\n"


def assert_each_matches_a_full_analysis(versions: list[str]) -> list[str]:
    """Analyse each version with one cache; each must equal a full analysis.  Returns the checks' statuses."""
    cache = RegionCache()
    for version in versions:
        incremental = analyze_document(version, "draft.md", cache=cache)
        full = analyze_document(version, "draft.md")
        assert observable(incremental) == observable(full)
    return [c.status for c in full.checks]


def test_a_stretch_is_replayed_again_only_while_the_names_it_reads_are_unchanged() -> None:
    text = SHARED + "".join(READER.format(i=i) for i in range(40))
    typed = text.replace("# Shared", "# Shared x")  # the parts after the block: a stretch starting after it
    edited = typed.replace("D = 8192", "D = 4096")  # what that stretch reads changes above it
    statuses = assert_each_matches_a_full_analysis([text, typed, typed, edited])
    assert statuses.count("fail") == 80  # every part read the new D


def test_a_stretch_is_replayed_again_only_while_no_problem_starts_or_ends_in_it() -> None:
    parts = [READER.format(i=i) for i in range(40)]
    parts[5] = "Typing goes here.\n\n"
    typed = SHARED + "".join(parts).replace("Typing", "Typing x")  # the parts after it: a stretch
    edited = typed.replace("Typing x", "**Problem 1:** Typing x")  # a problem now runs over that stretch
    assert_each_matches_a_full_analysis([typed.replace("Typing x", "Typing"), typed, typed, edited, typed])
    problems = {c.problem for c in analyze_document(edited, "draft.md").checks}
    assert problems == {None, "Problem 1"}


SECTION_WITH_PROBLEM = """\
## Part {i}

```calc
X_{i} = {i} + 1
```

**Question {i}:** what is X_{i} doubled?

```calc
Y = 2 * X_{i}
```

It is {double}<!-- = Y -->, and the shared width is still 8192<!-- = D -->.

"""


def crossing_draft(sections: int) -> str:
    """A draft whose every section holds a problem after top-level work: each chunk crosses a problem."""
    parts = [SHARED, "Typing goes here.\n\n"]
    parts += [SECTION_WITH_PROBLEM.format(i=i, double=2 * (i + 1)) for i in range(sections)]
    return "".join(parts)


def test_typing_before_chunks_that_cross_problems_looks_up_a_few_runs() -> None:
    # Each chunk enters and leaves a problem: one stretch crossing them all replays them.
    assert_typing_looks_up_a_few_runs(crossing_draft(8), crossing_draft(64), "Typing goes here")


def test_a_stretch_across_problems_reads_again_the_top_level_name_a_problem_hides() -> None:
    # Each problem defines its own D; the top-level claims after each problem read the draft's D above.
    text = crossing_draft(20).replace("Y = 2 * X_", "D = 1\nY = 2 * X_").replace("8192<!-- = D -->", "1<!-- = D -->")
    text = text.replace(
        "and the shared width is still 1<!-- = D -->.\n\n",
        "and D is 1<!-- = D --> there.\n\nOutside, 8192<!-- = D -->.\n\n",
    )
    typed = text.replace("Typing goes here", "Typing goes here x")
    edited = typed.replace("D = 8192", "D = 4096")  # the top-level D every stretch reads, above them
    statuses = assert_each_matches_a_full_analysis([text, typed, typed, typed + " ", edited])
    assert statuses.count("fail") == 20  # the top-level claims, not the problems' own


def test_an_edit_in_a_new_place_breaks_one_short_stretch(monkeypatch: pytest.MonkeyPatch) -> None:
    # Stretches hold at most LONGEST chunks: moving to type elsewhere replays one stretch's runs one by one.
    monkeypatch.setattr(stretches, "LONGEST", 16)
    text = forward_draft(60)
    versions = typed(text, "## Step 5\n\nAt", 3) + typed(typed(text, "## Step 5\n\nAt", 3)[-1], "## Step 40\n\nAt", 1)
    counts = runs_looked_up(text, versions)
    assert counts[-1] <= 16 + 2  # the broken stretch's runs, and the typed chunk's neighbours
    cache = RegionCache()
    for version in versions:
        analyze_document(version, "draft.md", cache=cache)
    assert cache._stretches and all(len(s.scans) <= 16 for s in cache._stretches.values())


def test_runs_above_the_edits_are_moved_once_to_where_they_now_lie() -> None:
    # Runs crossing problems are replayed step by step; recorded before typing above them, they lie elsewhere.
    text = crossing_draft(20)
    cache = RegionCache()
    versions = [text, text, *typed(text, "Typing goes here", 3)]
    versions += typed(versions[-1], "## Part 18\n", 4)  # typing below them: they stay where they are
    for version in versions[:-2]:
        analyze_document(version, "draft.md", cache=cache)
    before = analyze_document(versions[-2], "draft.md", cache=cache)
    after = analyze_document(versions[-1], "draft.md", cache=cache)
    early = [n for n, binding in enumerate(after.bindings) if binding.name in ("X_2", "Y") and binding.span.start < 900]
    assert early and all(after.bindings[n] is before.bindings[n] for n in early)  # not moved again
    assert observable(after) == observable(analyze_document(versions[-1], "draft.md"))


def test_the_first_keystroke_after_opening_replays_stretches_the_first_analysis_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Runs recorded by the first analysis make stretches at once: its first edit need not look up every run.
    monkeypatch.setattr(stretches, "LONGEST", 16)
    for text, at in ((forward_draft(64), "## Step 2\n\nAt"), (crossing_draft(40), "Typing goes here")):
        cache = RegionCache()
        analyze_document(text, "draft.md", cache=cache)
        assert cache.runs > 40  # every run looked up (and recorded) once
        edited = typed(text, at, 1)[0]
        assert edited != text
        incremental = analyze_document(edited, "draft.md", cache=cache)
        assert cache.runs <= stretches.LONGEST + 2  # the broken stretch's runs, not the draft's
        assert observable(incremental) == observable(analyze_document(edited, "draft.md"))


def test_a_run_recorded_again_because_a_name_changed_stays_out_of_stretches(monkeypatch: pytest.MonkeyPatch) -> None:
    # A later run reads the name being edited: recorded again on each edit, in a stretch it would break the
    # stretch (and every run of it would be looked up one by one) on each of them.
    monkeypatch.setattr(stretches, "LONGEST", 16)
    text = forward_draft(48).replace("## Step 40\n", "## Step 40\n\n```calc\nreader = B_20 * 2\n```\n", 1)
    versions = [text.replace("B_20 = ", f"B_20 = {n}", 1) for n in (1, 2, 3, 4)]
    counts = runs_looked_up(text, versions)
    assert max(counts[1:]) <= 3  # the edited chunk's run and the reader's


def test_a_first_analysis_keeps_no_placed_regions_for_the_first_keystroke_to_free() -> None:
    # It placed every chunk's regions; the first keystroke replays stretches and walks only the chunks
    # around the edit, so those placements would only be freed in it (20 MB: 147k regions, 50 ms).
    text = forward_draft(64)
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    assert cache.first and cache.chunks.placed_region_count == 0
    edited = typed(text, "## Step 2\n\nAt", 1)[0]
    incremental = analyze_document(edited, "draft.md", cache=cache)
    assert not cache.first and 0 < cache.chunks.placed_region_count < 40  # the walked chunks' regions
    assert observable(incremental) == observable(analyze_document(edited, "draft.md"))


def test_recorded_and_moved_steps_know_their_owners_and_check_facts_as_worked_out_afresh() -> None:
    from scaling_core.document.effects import Effects, check_facts, moved_effects, owners_of

    cache = RegionCache()
    analyze_document(crossing_draft(12), "draft.md", cache=cache)
    steps = [step for run in cache._runs.values() for step in run.steps if isinstance(step, Effects)]
    assert any(step.references and step.bindings for step in steps) and any(step.checks for step in steps)
    for step in steps:
        moved = moved_effects(step, 7)
        for effects in (step, moved):
            assert effects._owners == owners_of(effects.bindings, effects.references)  # known before any replay
            if effects.checks:
                assert effects._check_facts == check_facts(effects.checks, [c.span.start for c in effects.checks])
