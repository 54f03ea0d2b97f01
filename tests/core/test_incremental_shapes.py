"""Incremental analysis on every draft shape: long blocks, dense paragraphs, no headings, unknown names.

Each edit must cost what it changed (the regions, pieces and runs it touched), and the
result must equal a full analysis (``observable``).
"""

from __future__ import annotations

import os
import random
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.corpus import book_like
from scaling_core import analyze_document
from scaling_core.document import effects as effects_module
from scaling_core.document import gathered as gathered_module
from scaling_core.document import pieces as pieces_module
from scaling_core.document.extract import _Extractor, _lone_fence, all_regions, extract
from scaling_core.document.incremental import ChunkCache, RegionCache
from scaling_core.document.interpret import Interpreter
from scaling_core.document.shift import move_check
from scaling_core.text import LineIndex
from tests.core.test_incremental import observable

EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))


def long_block(groups: int) -> str:
    lines = ["```calc", "D = 8192"]
    for g in range(groups):
        lines += [
            f"# layer {g}",
            f"B_{g} = {64 * (g % 16 + 1)}",
            f"t_{g} = 2 * B_{g} * D * D / tpu_v5e.flops_bf16 -> us",
        ]
    return "\n".join([*lines, "```", ""])


def test_an_edit_in_a_long_block_reevaluates_its_piece_not_the_block() -> None:
    text = "# Model\n\n" + long_block(400) + "\nLayer 7 takes 87.2 µs<!-- ≈ t_7 -->.\n"
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    edited = text.replace("B_200 = 576", "B_200 = 577", 1)
    assert edited != text
    incremental = analyze_document(edited, "draft.md", cache=cache)
    assert cache.statements <= pieces_module.MAX_PIECE  # one piece of statements, not the block's 801
    assert observable(incremental) == observable(analyze_document(edited, "draft.md"))


def test_a_long_block_in_pieces_gives_what_the_whole_block_gives() -> None:
    # Unclosed brackets, thousands separators, comments, checks and redefinitions around the cuts.
    rng = random.Random(4)
    parts = ["x = 1", "y = (x + 2", "z = 1,000 * x", "f = max(1,000, 2)", "# a note", "x = x + 1", "x == 2",
             "w = [1, 2", "q = 3 +", "", "  v = 2", "u = v * 1,024"]  # fmt: skip
    for crlf in (False, True):
        body = [rng.choice(parts) for _ in range(400)]
        text = "```calc\n" + "\n".join(body) + "\n```\n"
        if crlf:
            text = text.replace("\n", "\r\n")
        whole = MinLines(10**9)
        with whole:
            expected = observable(analyze_document(text, "draft.md"))
        assert observable(analyze_document(text, "draft.md")) == expected


class MinLines:
    """Blocks shorter than ``lines`` stay one region, while in the ``with``."""

    def __init__(self, lines: int) -> None:
        self.lines = lines

    def __enter__(self) -> None:
        self.saved, pieces_module.MIN_LINES = pieces_module.MIN_LINES, self.lines

    def __exit__(self, *_: object) -> None:
        pieces_module.MIN_LINES = self.saved


def dense(paragraphs: int, headings: bool) -> str:
    out = []
    for p in range(paragraphs):
        if headings:
            out.append(f"## Part {p}\n\n")
        out += [f"Step {i}: `2 * {i} = {2 * i}` and about {i} s<!-- ≈ {i} s -->.\n" for i in range(30)]
        out.append("\n")
    return "".join(out)


def test_typing_in_a_paragraph_without_headings_rescans_and_rewalks_that_paragraph() -> None:
    for headings in (True, False):
        text = dense(40, headings)
        cache = RegionCache()
        analyze_document(text, "draft.md", cache=cache)
        at = text.index("Step 7:", len(text) // 2)
        for typed in range(3):
            text = text[: at + 2 + typed] + "x" + text[at + 2 + typed :]
            incremental = analyze_document(text, "draft.md", cache=cache)
        assert cache.chunks.parsed == 1  # one paragraph parsed again
        assert cache.walked <= 180  # the regions of its chunk (a few short paragraphs), not the 2,400
        assert observable(incremental) == observable(analyze_document(text, "draft.md"))


def test_an_unknown_name_is_replayed_and_its_note_follows_the_names() -> None:
    text = "```calc\nspeed = 1\nx = sped * 2\n```\n\nLater prose `1 + 1 = 2`.\n\n## More\n\nIt is 4<!-- = speeds -->.\n"
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    edited = text.replace("Later prose", "Later, prose")
    evaluated = []
    original = Interpreter.evaluate
    with patch.object(Interpreter, "evaluate", lambda self, *a, **k: evaluated.append(a[0]) or original(self, *a, **k)):
        incremental = analyze_document(edited, "draft.md", cache=cache)
    assert evaluated == []  # the block and the claim with unknown names are replayed
    full = analyze_document(edited, "draft.md")
    assert observable(incremental) == observable(full)
    assert [d.notes[0] for d in full.diagnostics if d.code == "N001"] == [
        "did you mean 'speed'?",
        "did you mean 'speed'?",
    ]


BLOCKS = st.sampled_from(
    [
        "# Title\n", "Some prose with `1 + 1 = 2` in it.\n", "- a list\n- item `2 * 2 = 4`\n", "  indented `3 = 3`\n",
        "> quoted `x = 1`\n", "```calc\nx = 1\n```\n", "```calc\nopen = 2\n", "<!--\n", "-->\n", "---\n",
        "**Question 1:** what is 2<!-- = 1 + 1 -->?\n", "<details>\n", "</details>\n", "1. first\n", "    code `5 = 5`\n",
        ":::{note}\n", ":::\n", "~~~\n", "<!-- margin: off -->\n", "text\n===\n", "",
        "So $2 \\cdot 3 = 6$ and $x$.\n",
    ]
)  # fmt: skip
DOCUMENTS = st.lists(st.tuples(BLOCKS, st.sampled_from(["", "\n", "\n\n", "\r\n\r\n"])), max_size=25)


@settings(max_examples=EXAMPLES or 200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.booleans())
def test_chunked_extraction_equals_one_pass(blocks: list[tuple[str, str]], latex_math: bool) -> None:
    text = "".join(block + gap for block, gap in blocks)
    cache = ChunkCache()
    cache.begin()
    chunked, whole = extract(text, cache=cache, latex_math=latex_math), extract(text, latex_math=latex_math)
    assert all_regions(chunked, cache) == whole.regions
    assert chunked.diagnostics == whole.diagnostics and chunked.problems == whole.problems
    assert chunked.suppressions == whole.suppressions and chunked.calc_suppressions == whole.calc_suppressions
    assert chunked.headings == whole.headings and chunked.python_blocks == whole.python_blocks


@settings(max_examples=EXAMPLES or 200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["x = 1", "```", "````", "  ```", "~~~", "``` x", "y = 2", "", "    ```", "```calc"]),
        max_size=12,
    ),
    st.sampled_from(["```calc", "````calc", "~~~calc", "```python calc", "``` {exercise}"]),
)
def test_a_lone_long_fence_is_read_as_markdown_it_reads_it(lines: list[str], opener: str) -> None:
    text = "\n".join([opener, *lines]) + "\n\n"
    fast = _lone_fence(text, True)
    assert fast is None or fast == _Extractor(text, LineIndex(text), True).run()


@settings(max_examples=EXAMPLES or 100, deadline=None)
@given(
    st.lists(st.sets(st.text("abt_01", min_size=1, max_size=6), max_size=40), min_size=1, max_size=6),
    st.lists(st.text("abt_01", min_size=1, max_size=6), min_size=1, max_size=4),
)
def test_did_you_mean_kept_up_to_date_is_what_a_fresh_search_gives(
    versions: list[set[str]], spellings: list[str]
) -> None:
    import difflib

    from scaling_core.document.suggest import ScopeNames

    scope = ScopeNames()
    for names in versions:  # the scope's names as an author edits them
        scope.update(frozenset(names))
        for spelling in spellings:
            fresh = difflib.get_close_matches(spelling, sorted(names - {spelling}), n=3, cutoff=0.6)
            note = scope.note(spelling)
            assert note == ("did you mean " + " or ".join(f"'{m}'" for m in fresh) + "?" if fresh else None)


def test_a_note_is_worked_out_once_while_the_scope_keeps_its_names() -> None:
    from scaling_core.document import suggest

    names = [f"t_{n}" for n in range(300)] + ["flops", "bytes"]
    scope = suggest.ScopeNames()
    scope.update(frozenset(names))
    first = [scope.note(spelling) for spelling in ("tt_1", "flop", "nothing_like_it")]
    assert first[0] is not None and first[1] == "did you mean 'flops'?" and first[2] is None
    scope.update(frozenset(names))  # the next analysis: the same names (a keystroke in prose)
    with patch.object(suggest.heapq, "nlargest", side_effect=AssertionError("worked out again")):
        assert [scope.note(spelling) for spelling in ("tt_1", "flop", "nothing_like_it")] == first
    scope.update(frozenset([*names, "flip"]))  # a name added: worked out again, with it
    assert scope.note("flop") == "did you mean 'flops' or 'flip'?"


PARTS = st.sampled_from(
    [
        "**Question 1:** it is 4 s<!-- = x -->.\n", "```calc\nx = 4 s\ny = x * 2\n```\n", "So `x * 2 = 8 s` and 8 s<!-- = y -->.\n",
        "## Part\n", "**Problem 2.** Now 3<!-- = z --> and {calc}`z`.\n", "```calc\nz = 3\nx = 5 s\n```\n",
        "<details>\n\n```calc\nw = z + 1\n```\n\n</details>\n", "Top level: 5 s<!-- = x --> and `1 + 1 = 2`.\n",
        "```calc\nimport_me = 1\n```\n", "Unknown: 2<!-- = nothing -->.\n",
    ]
)  # fmt: skip
EDITS = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 8), st.sampled_from(["x", "\n\n", "1", "**Question 3:** ", "`"])),
    max_size=8,
)


@settings(max_examples=EXAMPLES or 60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(PARTS, st.sampled_from(["\n", "", "\n\n"])), min_size=1, max_size=20), EDITS)
def test_runs_across_problems_and_waiting_claims_replay_as_a_full_analysis_gives(
    parts: list[tuple[str, str]], edits: list[tuple[float, int, str]]
) -> None:
    text = "".join(part + gap for part, gap in parts)
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    analyze_document(text, "draft.md", cache=cache)  # every run recorded and replayed once
    for where, remove, insert in edits:
        at = int(where * len(text))
        text = text[:at] + insert + text[at + remove :]
        incremental = analyze_document(text, "draft.md", cache=cache)
        assert observable(incremental) == observable(analyze_document(text, "draft.md"))


def test_a_run_that_leaves_a_problem_reads_the_top_level_name_the_problem_hid() -> None:
    # The problem's chunk is long enough to be cut before its end: the next chunk starts inside the
    # problem (whose local X hides the top level's) and leaves it, then reads the top level's X.
    text = (
        "```calc\nX = 1\n```\n\n## Work\n\n**Question 1:** what is X here?\n\n{% details Answer %}\n\n"
        + "Long answer prose. " * 120
        + "\n\n```calc\nX = 2\n```\n\n"
        + "More answer prose. " * 120
        + "\n\n{% enddetails %} so `X * 1 = 2` there.\nAfter it, 1<!-- = X --> again.\n"
    )
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    analyze_document(text, "draft.md", cache=cache)
    edited = text.replace("X = 1", "X = 5", 1)
    incremental = analyze_document(edited, "draft.md", cache=cache)
    full = analyze_document(edited, "draft.md")
    assert [c.status for c in full.checks] == ["pass", "fail"]
    assert observable(incremental) == observable(full)


def test_problem_verdicts_after_typing_at_the_top_move_only_the_checks_inside_problems() -> None:
    text = book_like(1_500)
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    moved: list[object] = []

    def counted(delta: int, check: object) -> object:
        moved.append(check)
        return move_check(delta, check)  # type: ignore[arg-type]

    edited = text.replace("## Section 0", "## Section 0x", 1)
    with patch.object(effects_module, "move_check", counted), patch.object(gathered_module, "move_check", counted):
        incremental = analyze_document(edited, "draft.md", cache=cache)
        verdict_moves = len(moved)
        expected = observable(analyze_document(edited, "draft.md"))
        assert observable(incremental) == expected  # reads (moves) every check
    inside = sum(p.total for p in incremental.problems)
    assert incremental.problems and 0 < inside < len(incremental.checks) // 2
    assert verdict_moves <= inside  # before: every check, to list them for the verdicts


def test_problem_verdicts_of_claims_waiting_for_misspelt_names_do_not_sort_every_check() -> None:
    from bench.shapes import unknown
    from scaling_core.document.sorted_on_read import SortedOnRead

    cache = RegionCache()
    lines = unknown(1_200).split("\n")
    analyze_document("\n".join(lines), "x.md", cache=cache)
    for at in (5, len(lines) // 2):
        lines[at] += " typed"
        text = "\n".join(lines)
        analysis = analyze_document(text, "x.md", cache=cache)
        checks = analysis.checks
        assert type(checks) is SortedOnRead and analysis.problems
        assert checks.contents()[1] is False  # the verdicts read windows: nothing sorted, nothing moved yet
        assert observable(analysis) == observable(analyze_document(text, "x.md"))  # verdicts included
