"""The document mutation fuzzer: real drafts, randomly edited, never crash the engine.

Starts from examples/ and tests/realistic/ and applies random edits, with a
bias to what changes a draft's structure (stray backticks, HTML comment
openers and closers, fences, ``$``, problem lead-ins, answer blocks).  Each
edited draft must analyse soundly (``properties.assert_sound``), and an
editor's incremental analysis of the edit sequence, stopped part-way at
random points as a newer version arrives, must equal a full analysis.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import AnalysisCancelled, Config, analyze_document
from scaling_core.document import driver as driver_module
from scaling_core.document.incremental import RegionCache
from tests.fuzz.properties import (
    assert_incremental_equals_full,
    assert_no_internal_error,
    assert_sound,
    corpus,
    corpus_loader,
    examples,
    summary,
)

DRAFTS = corpus()
LOADER = corpus_loader(DRAFTS)
FRAGMENTS = (
    "`", "``", "```", "```calc\n", "\n```\n", "<!--", "-->", "<!-- calc\n", "<!-- ≈ t -->", "<!-- = x * 2 -->",
    "$", "$$", "\\(", "\\)", "**Question 1:** ", "**Question 2 [x]:** ", "**Problem 3.** ", "<details>",
    "</details>", "{% details a %}", "{% enddetails %}", "\n", "\n\n", "# H\n", "## H\n", "<!-- margin: off -->",
    "<!-- margin: on -->", "<!-- margin: ignore -->", "{calc}`", " = ", " ≈ ", "~", "1e400", "0", ",", "\r\n",
    "\t", "> ", "- ", ":::{note}\n", "```{exercise}\n", "```{solution}\n", "<!-- problem: p -->",
    "<!-- /problem -->", "import \"examples/constants.md\"\n", "\u2028", "\x00", "🚀", "---\n",
)  # fmt: skip
_EDIT = st.tuples(st.floats(0, 1), st.integers(0, 24), st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)))
_EDITS = st.lists(_EDIT, min_size=1, max_size=8)
_CONFIGS = st.sampled_from((None, Config(latex_math=True)))
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


def edited(text: str, edits: list[tuple[float, int, str]]) -> list[str]:
    """Each version of ``text`` as the edits are made one after the other."""
    versions = []
    for where, remove, insert in edits:
        position = int(where * len(text))
        text = text[:position] + insert + text[position + remove :]
        versions.append(text)
    return versions


def after_polls(count: int) -> Callable[[], bool]:
    """A ``cancelled`` callback that says yes from its ``count``-th call on (the first is call 0)."""
    polls = iter(range(count, -1, -1))
    return lambda: next(polls, 0) == 0


@settings(max_examples=examples(100), deadline=None, suppress_health_check=_HEALTH)
@given(st.sampled_from(sorted(DRAFTS)), _EDITS, _CONFIGS)
def test_edited_drafts_analyse_soundly(name: str, edits: list[tuple[float, int, str]], config: Config | None) -> None:
    assert_sound(edited(DRAFTS[name], edits)[-1], config, LOADER)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=_HEALTH)
@given(st.sampled_from(sorted(DRAFTS)), _EDITS, _CONFIGS)
def test_edit_sequences_analyse_incrementally_as_in_full(
    name: str, edits: list[tuple[float, int, str]], config: Config | None
) -> None:
    assert_incremental_equals_full([DRAFTS[name], *edited(DRAFTS[name], edits)], config, LOADER)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=_HEALTH)
@given(st.sampled_from(sorted(DRAFTS)), _EDITS, st.lists(st.integers(0, 40), min_size=8, max_size=8))
def test_analyses_stopped_at_random_points_leave_the_cache_correct(
    name: str, edits: list[tuple[float, int, str]], stops: list[int]
) -> None:
    # As in the editor: each version's analysis is stopped part-way by a newer one, which then completes.
    saved, driver_module.STOP_POLL_REGIONS = driver_module.STOP_POLL_REGIONS, 1
    try:
        cache = RegionCache()
        analyze_document(DRAFTS[name], "fuzz.md", loader=LOADER, cache=cache)  # type: ignore[arg-type]
        for text, stop in zip(edited(DRAFTS[name], edits), stops):
            with contextlib.suppress(AnalysisCancelled):
                analyze_document(
                    text + "\n`1 + 1 = 2` <!--\n",
                    "fuzz.md",
                    loader=LOADER,  # type: ignore[arg-type]
                    cache=cache,
                    cancelled=after_polls(stop),
                )
            incremental = analyze_document(text, "fuzz.md", loader=LOADER, cache=cache)  # type: ignore[arg-type]
            full = analyze_document(text, "fuzz.md", loader=LOADER)  # type: ignore[arg-type]
            assert_no_internal_error(full, text)
            assert summary(incremental) == summary(full), text[:2000]
    finally:
        driver_module.STOP_POLL_REGIONS = saved
