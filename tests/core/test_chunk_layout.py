"""A new version's chunks from the previous version's (issue 15): the same chunks as cutting it whole.

Random drafts of the blocks that decide cuts (headings, fences long and
short, HTML comments, blank lines holding spaces, front matter), edited at
random with the characters that make or unmake a cut: after each edit the
layout kept from the previous version equals the one a fresh cache cuts.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import analyze_document
from scaling_core.document.chunk_layout import same_text
from scaling_core.document.extract import extract
from scaling_core.document.incremental import ChunkCache, RegionCache
from tests.core.test_incremental import observable
from tests.fuzz.properties import examples

BLOCKS = [
    "# Heading\n\n",
    "## Section two\n\n",
    "A paragraph with `2 * 3 = 6` in it.\n\n",
    "Another paragraph\nwith two lines, 6<!-- = 2 * 3 -->.\n\n",
    "```calc\nx = 2\ny = x * 3\n```\n\n",
    "```python\nprint(1)\n```\n\n",
    "```calc\n" + "".join(f"v{i} = {i}\n" for i in range(700)) + "```\n\n",  # a long fence: cut on its own
    "<!-- a comment\n\nover a blank line -->\n\n",
    "- a list\n- of items\n\n",
    "   \n\t\n",
    "---\n\n",
    "> a quote\n\n",
    "A long paragraph " + "of words " * 150 + "ends.\n\n",  # chunks as long as 2,048 characters are cut
]
FRAGMENTS = ["\n\n", "\n", "```", "```calc\n", "#", "# ", "<!--", "-->", "---", " ", "x", "\t\n", "\r\n"]

drafts = st.lists(st.sampled_from(BLOCKS), min_size=12, max_size=80).map("".join)
fronts = st.sampled_from(["", "---\ntitle: x\n---\n\n", "---\ntitle: x\n"])
edits = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 3000), st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8))),
    min_size=1,
    max_size=8,
)


def layout_of(text: str, cache: ChunkCache) -> tuple[list[int], list[str]]:
    """The chunks ``cache`` reads ``text`` in (where each starts, its text)."""
    cache.begin()
    extract(text, cache=cache)
    cache.end()
    layout = cache.layout
    assert layout is not None and layout.text is text
    chunks = [layout.chunk(number) for number in range(len(layout.starts))]
    assert layout.keys == [hash(chunk) for chunk in chunks]
    return layout.starts, chunks


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fronts, drafts, edits)
def test_the_chunks_kept_from_the_previous_version_are_those_cut_whole(
    front: str, draft: str, sequence: list[tuple[float, int, str]]
) -> None:
    text = front + draft
    kept = ChunkCache()
    layout_of(text, kept)
    for where, remove, insert in sequence:
        position = int(where * len(text))
        text = text[:position] + insert + text[position + remove :]
        starts, chunks = layout_of(text, kept)
        assert (starts, chunks) == layout_of(text, ChunkCache())
        assert "".join(chunks) == text


def test_typing_in_a_long_draft_cuts_again_only_around_the_edit() -> None:
    text = "".join(BLOCKS[i % 6] for i in range(600))
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    at = text.index("Another paragraph", len(text) // 2)
    looked_up: list[str] = []
    get = cache.chunks.get
    cache.chunks.get = lambda chunk, *where: looked_up.append(chunk) or get(chunk, *where)  # type: ignore[method-assign]
    for _ in range(3):
        looked_up.clear()
        text = text[:at] + "x" + text[at:]
        incremental = analyze_document(text, "draft.md", cache=cache)
        assert cache.chunks.parsed == 1  # the typed chunk alone
        after = cache.chunks.layout
        assert after is not None and len(after.starts) > 100
        assert 1 <= len(looked_up) <= 4  # the others are kept without being cut out of the text
        # The cache refers to the draft's own string: no chunk's text is kept as a copy.
        assert all(entry[0] is text for entry in cache.chunks._entries.values())
        assert observable(incremental) == observable(analyze_document(text, "draft.md"))


def test_edits_all_over_a_long_draft_keep_the_chunks_cutting_it_whole_makes() -> None:
    # Deterministic and dense where the property test samples: every fragment at 200 places.
    order = [BLOCKS[(i * 7 + i // 5) % len(BLOCKS)] for i in range(90)]
    base = "".join(order)
    kept = ChunkCache()
    layout_of(base, kept)
    for number in range(200):
        at = number * len(base) // 200
        for fragment in ("\n\n", "```", "# ", "x" * 900, ""):
            text = base[:at] + fragment + base[at + (40 if not fragment else 0) :]
            assert layout_of(text, kept) == layout_of(text, ChunkCache())
            layout_of(base, kept)  # back, from the edited version's layout


def test_a_long_run_compared_a_piece_at_a_time_is_compared_whole() -> None:
    """``same_text`` (pieces of ``step`` characters, so the event loop gets the lock between them) answers as one
    comparison of the whole run does, wherever a difference lies: in the first piece, a middle one, the last
    partial one, or past the run (never read)."""
    old = "".join(chr(97 + (7 * n) % 26) for n in range(60))
    for shift in (-3, 0, 2):
        for changed in range(-1, 60):
            text = "." * max(shift, 0) + old[max(-shift, 0) :]
            if changed >= 0:
                at = changed + shift
                if not 0 <= at < len(text):
                    continue
                text = text[:at] + "#" + text[at + 1 :]
            for begin in range(max(0, -shift), 40, 3):
                for end in range(begin, 60, 5):
                    whole = text.startswith(old[begin:end], begin + shift)
                    assert same_text(text, old, begin, end, shift, step=7) is whole, (shift, changed, begin, end)
