"""The index of names by their characters: exactly the names that pass difflib's first two tests, and the
did-you-mean notes it gives are those of a fresh ``difflib.get_close_matches``."""

from __future__ import annotations

import difflib
import os
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from scaling_core.document import suggest
from scaling_core.document.spelling_index import SpellingIndex, least_shared
from scaling_core.expr.values import CUTOFF

EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))
SPELLING = st.text("abt_01µ", max_size=12)


def _first_two_tests(spelling: str, names: list[str]) -> set[str]:
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(spelling)
    found = set()
    for name in names:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            found.add(name)
    return found


@settings(max_examples=EXAMPLES or 200, deadline=None)
@given(st.sets(st.text("abt_01µ", min_size=1, max_size=12), max_size=80), st.lists(SPELLING, max_size=5))
def test_the_index_gives_exactly_the_names_that_pass_difflibs_first_two_tests(
    names: set[str], spellings: list[str]
) -> None:
    index = SpellingIndex(sorted(names))
    for spelling in spellings:
        found = index.sharing(spelling)
        assert len(found) == len(set(found))
        assert set(found) == (_first_two_tests(spelling, sorted(names)) if spelling else set())


def test_repeated_characters_count_as_often_as_both_hold_them() -> None:
    index = SpellingIndex(["aaaa", "abab", "bbbb", "a"])
    # "aab" shares 2 with "aaaa" (2*2/7 < 0.6), 3 with "abab" (2*3/7 >= 0.6), 1 with "bbbb", 1 with "a".
    assert index.sharing("aab") == ["abab"]
    assert least_shared(3, 4) == 3 and least_shared(1, 9) is None
    assert 2.0 * least_shared(6, 6) / 12 >= CUTOFF > 2.0 * (least_shared(6, 6) - 1) / 12  # type: ignore[operator]


@settings(max_examples=EXAMPLES or 100, deadline=None)
@given(
    st.lists(st.sets(st.text("abt_01", min_size=1, max_size=6), max_size=40), min_size=1, max_size=5),
    st.sets(st.text("abt_01", min_size=1, max_size=6), max_size=6),
    st.lists(st.text("abt_01", min_size=1, max_size=6), min_size=1, max_size=4),
)
def test_notes_from_the_index_are_what_a_fresh_search_gives(
    versions: list[set[str]], own: set[str], spellings: list[str]
) -> None:
    """Every set of names indexed (not only those of 64 or more), a problem's own names beside the shared ones."""
    scope = suggest.ScopeNames()
    with patch.object(suggest, "INDEXED", 1):
        for shared in versions:
            names = frozenset(shared | own)
            scope.update(names, frozenset(shared))
            for spelling in spellings:
                fresh = difflib.get_close_matches(spelling, sorted(names - {spelling}), n=3, cutoff=0.6)
                note = scope.note(spelling)
                assert note == ("did you mean " + " or ".join(f"'{m}'" for m in fresh) + "?" if fresh else None)


def test_a_new_spelling_is_compared_only_with_names_that_share_enough_characters() -> None:
    names = frozenset([f"t_{n}" for n in range(2000)] + ["flops", "flips"])
    scope = suggest.ScopeNames()
    scope.update(names, names)
    compared: list[str] = []
    original = difflib.SequenceMatcher.set_seq1

    def counting(matcher: difflib.SequenceMatcher[str], name: str) -> None:
        compared.append(name)
        original(matcher, name)

    with patch.object(difflib.SequenceMatcher, "set_seq1", counting):
        assert scope.note("flop") == "did you mean 'flops' or 'flips'?"
    assert sorted(name for name in compared if name) == ["flips", "flops"]  # not the 2,000 others
