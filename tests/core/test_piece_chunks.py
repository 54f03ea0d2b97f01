"""A long calc block walked as one chunk per piece (issue 15): typing in it replays the other pieces in stretches.

Each test edits a long block and checks every version against a full
analysis (``observable``), and that the pieces around the edit were not
looked up one by one.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import analyze_document
from scaling_core.document.incremental import RegionCache
from tests.core.test_incremental import assert_edits_match_a_full_reanalysis, observable
from tests.core.test_incremental_shapes import long_block
from tests.fuzz.properties import examples

DRAFT = "# Model\n\n" + long_block(400) + "\nLayer 7 takes 87.2 µs<!-- ≈ t_7 -->.\n"


def test_typing_in_a_long_block_looks_up_only_the_piece_typed_in() -> None:
    cache = RegionCache()
    text = DRAFT
    analyze_document(text, "draft.md", cache=cache)
    at = text.index("# layer 200") + len("# layer 200")
    looked_up = []
    for _ in range(4):
        text = text[:at] + "x" + text[at:]
        at += 1
        incremental = analyze_document(text, "draft.md", cache=cache)
        looked_up.append(cache.walked)
        assert observable(incremental) == observable(analyze_document(text, "draft.md"))
    # The first keystroke splits the block's runs; from the next one on, its piece alone (the claim below too).
    assert max(looked_up[1:]) <= 2


FRAGMENTS = ["B_9 = 3\n", "\n", "x = (1 +\n", "```\n", "# note\n", "t_5 == 1 us\n", "\r\n", "D = 4096\n", "=", "1"]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.floats(0.02, 0.98), st.integers(0, 60), st.sampled_from(FRAGMENTS)), min_size=1, max_size=6)
)
def test_edits_in_a_long_block_match_a_full_analysis(edits: list[tuple[float, int, str]]) -> None:
    assert_edits_match_a_full_reanalysis(DRAFT, edits)
