"""Gathered stretches (issue 15): a stretch replayed whole a second time adds what its runs add in one go.

Its claims that wait for a name the stretch itself defines below them are
settled with it (their recorded resolution); the others wait as in a run's
replay.  Each test types or edits around such stretches and checks every
version against a full analysis (``observable``: results in order, references
included), and that the gathered path was taken.
"""

from __future__ import annotations

import pytest

from bench.shapes import unknown
from scaling_core import analyze_document
from scaling_core.document import stretches as stretches_module
from scaling_core.document.gathered import Deferral, Enter, Gathered, Piece, replay_gathered
from scaling_core.document.incremental import RegionCache
from tests.core.test_forward_reuse import forward_draft
from tests.core.test_incremental import observable
from tests.core.test_stretches import typed


def gathered_of(cache: RegionCache) -> list[Gathered]:
    """The gathered stretches the cache keeps for the next analysis."""
    return [s.gathered for s in cache._stretches.values() if isinstance(s.gathered, Gathered)]


def settled_claims(gathered: list[Gathered]) -> int:
    """How many claims the gathered stretches settle (resolved with them, never deferred)."""
    pieces = [part for g in gathered for part in g.parts if isinstance(part, Piece)]
    return sum(len(piece.settled.checks) for piece in pieces if piece.settled is not None)


def analysed(versions: list[str], cache: RegionCache) -> list[str]:
    """Analyse each version with ``cache``, each equal to a full analysis; the last one's check statuses."""
    statuses: list[str] = []
    for version in versions:
        incremental = analyze_document(version, "draft.md", cache=cache)
        full = analyze_document(version, "draft.md")
        assert observable(incremental) == observable(full)
        statuses = [c.status for c in full.checks]
    return statuses


def test_typing_settles_the_claims_that_wait_for_the_stretch_own_definitions() -> None:
    text = forward_draft(24)
    cache = RegionCache()
    analysed([text, text, *typed(text, "## Step 12\n\nAt", 4)], cache)
    gathered = gathered_of(cache)
    assert gathered  # the stretches before and after the typing, replayed whole twice
    # Every section's claims wait for its own block below: all of those outside the typed section are settled.
    assert settled_claims(gathered) >= 2 * 20
    assert not any(isinstance(part, Deferral) for g in gathered for part in g.parts)


def test_a_claim_waiting_for_a_name_defined_after_the_stretch_is_deferred_and_follows_it() -> None:
    text = "Overall it takes 7 µs<!-- ≈ total -->.\n\n" + forward_draft(16) + "```calc\ntotal = t_0 + t_1\n```\n"
    cache = RegionCache()
    versions = [text, text, *typed(text, "## Step 8\n\nAt", 6)]
    analysed(versions, cache)
    assert any(isinstance(part, Deferral) for g in gathered_of(cache) for part in g.parts)
    # The definition it reads, after every stretch, changes: the deferred claim reads the new one.
    edited = versions[-1].replace("total = t_0 + t_1", "total = t_0 + t_1 + t_2")
    assert analysed([edited], cache)[0] == "fail"


def test_settled_claims_inside_a_problem_are_added_when_the_problem_ends() -> None:
    # Without headings the problem runs over every section (a heading would end it).
    sections = forward_draft(16).replace("## Step", "Step").replace("# Claims", "Claims")
    text = "**Problem 1:** how long do the steps take?\n\n" + sections + "**Problem 2:** next.\n\n"
    text += "It takes 1 s<!-- = t_3 -->.\n\n"  # t_3 is problem 1's own: not known in problem 2
    cache = RegionCache()
    statuses = analysed([text, text, *typed(text, "Step 8\n\nAt", 6)], cache)
    assert {s.problem for s in cache._stretches.values() if isinstance(s.gathered, Gathered)} == {"Problem 1"}
    assert settled_claims(gathered_of(cache)) >= 2 * 6
    assert statuses[-1] == "skip"


def test_definitions_moved_once_stay_where_they_are_for_the_next_replays() -> None:
    text = forward_draft(24)
    cache = RegionCache()
    versions = [text, text, *typed(text, "# Claims", 3)]  # every run now lies 3 characters from where recorded
    versions += typed(versions[-1], "## Step 22\n\nAt", 5)  # typing below them: they stay where they are
    analysed(versions[:-1], cache)
    before = analyze_document(versions[-2], "draft.md", cache=cache).bindings
    after = analyze_document(versions[-1], "draft.md", cache=cache).bindings
    step_5 = [n for n, binding in enumerate(after) if binding.name == "t_5"]
    assert step_5 and all(after[n] is before[n] for n in step_5)  # not moved again: the same objects
    assert observable(analyze_document(versions[-1], "draft.md", cache=cache)) == observable(
        analyze_document(versions[-1], "draft.md")
    )


def problems_draft(sections: int) -> str:
    """Top-level blocks with a problem after each: problems read the top level's names, define their own (one
    shadows a top-level name), and state a claim before the block that derives it; prose after each problem
    reads a name only the problem defined (unknown there: the top level never saw it)."""
    parts = ["# Problems between sections\n\nIntro text to type in.\n\n"]
    for i in range(sections):
        b = 64 * (i % 8 + 1)
        parts.append(
            f"## Section {i}\n\n```calc\nB_{i} = {b}\nD = 8192\n```\n\n"
            f"**Problem {i}:** how long does batch {b} take?\n\n"
            f"It takes {2 * b * 8192 * 8192 / 197e12 * 1e6:.3g} µs<!-- ≈ t_{i} -->.\n\n"
            f"```calc\nD = 4096\nt_{i} = 2 * B_{i} * 8192 * 8192 / tpu_v5e.flops_bf16 -> us\n"
            f"d_{i} = D * 2\nd_{i} = 8192\n```\n\n"
            f"**Answer:** about the same.\n\n## After {i}\n\nThe width is 8192<!-- = D --> and `t_{i} = 1 us`.\n\n"
        )
    return "".join(parts)


def test_a_stretch_that_crosses_problems_is_gathered_with_its_scope_changes() -> None:
    text = problems_draft(12)
    cache = RegionCache()
    versions = [text, text, *typed(text, "Intro text", 5)]
    analysed(versions, cache)  # every version as a full analysis reads it
    crossing = [s for s in cache._stretches.values() if s.multi and isinstance(s.gathered, Gathered)]
    assert crossing, "no stretch that crosses problems was gathered"
    parts = [part for s in crossing for part in s.gathered.parts]  # type: ignore[union-attr]
    assert sum(isinstance(part, Enter) for part in parts) >= 2 * 10  # into each problem, and out of it
    assert any(isinstance(part, Deferral) for part in parts)  # the problems' claims wait, as in a run's replay


def test_a_crossing_stretch_whose_problems_lie_elsewhere_is_replayed_run_by_run_and_gathered_again() -> None:
    text = problems_draft(8)
    cache = RegionCache()
    analysed([text, text, *typed(text, "Intro text", 3)], cache)
    crossing = [s for s in cache._stretches.values() if s.multi and isinstance(s.gathered, Gathered)]
    assert crossing
    for stretch in crossing:  # as if the problems it crosses now lay elsewhere than when gathered
        stretch.gathered.layout = (("Problem 99", 0, 1),)  # type: ignore[union-attr]
    analysed(typed(typed(text, "Intro text", 3)[-1], "Intro textxxx", 1), cache)
    assert all(s.gathered is True for s in crossing)  # replayed run by run, gathered again on the next replay


def test_a_draft_first_analysis_gathers_its_stretches_and_its_first_edit_replays_them_gathered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replayed: list[Gathered] = []
    monkeypatch.setattr(stretches_module, "replay_gathered", lambda driver, gathered, *rest: replayed.append(gathered)
                        or replay_gathered(driver, gathered, *rest))  # fmt: skip
    # Long enough for several stretches: the edit breaks the first one, the others are replayed whole.
    for text, typed_at in ((problems_draft(100), "Intro text"), (forward_draft(120), "## Step 12\n\nAt")):
        cache = RegionCache()
        analyze_document(text, "draft.md", cache=cache)
        first = gathered_of(cache)
        assert first, "the first analysis gathered nothing"
        replayed.clear()
        analysed(typed(text, typed_at, 1), cache)  # the first edit: equal to a full analysis
        assert replayed and all(any(g is f for f in first) for g in replayed)
    assert settled_claims(gathered_of(cache)) >= 20  # the forward claims, resolved before it gathered them


def test_problem_verdicts_after_typing_above_them_move_none_of_their_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A verdict counts its checks' statuses, which moving leaves as they are: typing at the top of a draft
    of passing problems moves no check into place (publishing reads none either)."""
    from scaling_core.document import shift

    text, cache, moved = problems_draft(10), RegionCache(), []
    versions = [text, text, *typed(text, "Intro text", 3)]
    analysed(versions[:3], cache)
    made = shift.CheckResult  # a moved check is made by its constructor (``shift.move_check``)
    monkeypatch.setattr(shift, "CheckResult", lambda *fields: moved.append(fields) or made(*fields))
    for version in versions[3:]:
        analysis = analyze_document(version, "draft.md", cache=cache)
        assert [p.status.value for p in analysis.problems] == ["pass"] * 10
        assert analysis.problems == analyze_document(version, "draft.md").problems
    assert not moved


def test_claims_waiting_for_names_the_stretch_never_defines_do_not_split_its_pieces() -> None:
    # ~1 in 4 claims names something defined nowhere (a misspelt name): each waits to the end of the draft.
    text = unknown(600)
    cache = RegionCache()
    analysed([text, text, *typed(text, "## Section 3", 4)], cache)
    gathered = gathered_of(cache)
    kinds = ["".join(type(part).__name__[0] for part in g.parts) for g in gathered]  # Piece, Deferral, Enter
    assert sum(k.count("D") for k in kinds) >= 8
    assert all("DPD" not in k for k in kinds)  # no piece cut between two such claims of one scope
    assert any("DD" in k for k in kinds)  # both deferred after the piece that holds them (each problem: its own)
    names = {part.step.names for g in gathered for part in g.parts if isinstance(part, Deferral)}
    assert names and all(name[0].startswith("tt_") for name in names)


def test_such_claims_between_claims_the_stretch_settles_keep_their_order() -> None:
    # Each section's first claims wait for its own block (settled by the stretch); in every other section the
    # claim after the block names something defined nowhere: deferred, between settled ones.
    text = forward_draft(24)
    for i in range(0, 24, 2):
        text = text.replace(f"µs<!-- ≈ t_{i} --> once", f"µs<!-- ≈ tt_{i} --> once")
    cache = RegionCache()
    statuses = analysed([text, text, *typed(text, "## Step 12\n\nAt", 4)], cache)
    assert statuses.count("skip") == 12  # each misspelt claim (unknown: not checked), in its place
    gathered = gathered_of(cache)
    assert settled_claims(gathered) >= 20 and any(isinstance(p, Deferral) for g in gathered for p in g.parts)


def test_a_piece_keeps_its_items_offsets_and_targets_in_columns_and_reads_them_as_tuples() -> None:
    from scaling_core.document.gathered import Placed

    values, references = Placed(), Placed(targets=True)
    values.add(("a", "b"), 3)
    values.add(("c",), -2)
    references.add(("r", "s"), 5, [0, "name"])
    assert list(values) == [("a", 3), ("b", 3), ("c", -2)] and len(values) == 3 and values
    assert values[1] == ("b", 3) and values[-1] == ("c", -2) and values[1:] == [("b", 3), ("c", -2)]
    assert list(references) == [("r", 5, 0), ("s", 5, "name")] and references[0:1] == [("r", 5, 0)]
    assert values.items == ["a", "b", "c"] and values.offsets == [3, 3, -2]
    assert not Placed() and list(map(len, [values, references])) == [3, 2]


def test_a_piece_whose_items_share_an_offset_reads_as_one_that_lists_each() -> None:
    """Items added at one offset keep it once; the first added elsewhere spreads it to each item: read either way,
    by index, slice or in turn, every item has its own offset, and ``moved_by`` says whether one is not at -delta."""
    from scaling_core.document.gathered import Placed

    for adds in ([((), 9), (("a", "b"), 4), ((), 1), (("c",), 4)], [(("a",), 4), (("b", "c"), 7), (("d",), 4)]):
        placed, expected = Placed(targets=True), []
        for items, offset in adds:
            placed.add(items, offset, [n for n, _ in enumerate(items)])
            expected += [(item, offset, n) for n, item in enumerate(items)]
        assert list(placed) == expected and placed.offsets == [offset for _, offset, _ in expected]
        assert [placed[n] for n in range(-len(expected), len(expected))] == expected + expected
        assert all(placed[a:b] == expected[a:b] for a in range(-4, 5) for b in range(-4, 5))
        offsets = {offset for _, offset, _ in expected}
        assert [placed.moved_by(delta) for delta in (-4, -7, 0)] == [offsets != {4}, offsets != {7}, True]
    assert not Placed().moved_by(3)
