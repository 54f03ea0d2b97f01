"""A long calc block walked as one chunk per piece (issue 15): typing in it replays the other pieces in stretches.

Each test edits a long block and checks every version against a full
analysis (``observable``), and that the pieces around the edit were not
looked up one by one.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import analyze_document
from scaling_core.document.extract import scan_chunk
from scaling_core.document.incremental import RegionCache
from scaling_core.document.piece_chunks import PieceScans
from scaling_core.document.pieces import split_calc
from scaling_core.document.regions import CalcRegion
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


class _CountedLines(tuple):  # type: ignore[type-arg]
    """A block's lines that count how many times one is read by index."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        _CountedLines.reads += 1
        return super().__getitem__(index)


def _walked_starts(pieces: PieceScans, text: str, lines: type[tuple] = tuple) -> list[int]:  # type: ignore[type-arg]
    scan = scan_chunk(text)
    block = scan.regions[0]
    assert isinstance(block, CalcRegion)
    scan.regions[0] = CalcRegion(block.span, lines(block.lines), block.hidden, -1)
    pieces.begin()
    walked = pieces.walked(text, scan, set())
    pieces.end()
    return [start for start, _scan in walked or ()]


def _split_starts(text: str) -> list[int]:
    block = scan_chunk(text).regions[0]
    assert isinstance(block, CalcRegion)
    return [piece.span.start for piece in split_calc(block) or ()]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1), st.integers(0, 400), st.sampled_from(["", "x", "B_9 = 3\n", "\n", "# c\n", "z_1 ="])
        ),
        min_size=1,
        max_size=8,
    )
)
def test_a_long_block_edited_is_cut_where_a_fresh_split_cuts_it(edits: list[tuple[float, int, str]]) -> None:
    """Its cuts are worked out again only around the edit; they are where cutting the new text afresh puts them."""
    text, pieces = long_block(300), PieceScans()
    _walked_starts(pieces, text)
    for where, removed, inserted in edits:
        at = 8 + int(where * (len(text) - 12))  # inside the block: its opening and closing lines stay
        text = text[:at] + inserted + text[min(at + removed, len(text) - 4) :]
        assert _walked_starts(pieces, text) == _split_starts(text)


def test_a_keystroke_in_a_long_block_reads_the_lines_of_the_pieces_around_it() -> None:
    text, pieces = long_block(600), PieceScans()
    _walked_starts(pieces, text)
    at = text.index("# layer 300") + len("# layer 300")
    _CountedLines.reads = 0
    starts = _walked_starts(pieces, text[:at] + "x" + text[at:], _CountedLines)
    assert starts == _split_starts(text[:at] + "x" + text[at:])
    assert _CountedLines.reads < 400  # a fresh split reads ~1,500 of the block's 1,800 lines
