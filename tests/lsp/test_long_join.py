"""Joining a long text piece by piece, the lock released for each copy: the same string as ``"".join``."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.lsp import long_join
from server.lsp.long_join import join_pieces, join_views

EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))
#: Characters of every width a string can have: ASCII, Latin-1, two bytes (and lone surrogates), four bytes.
CHARACTERS = st.sampled_from(["a", "\n", "\x00", "é", "ÿ", "ā", "€", "\ud800", "\udfff", "𝑥", "😀"])
PIECES = st.lists(st.lists(CHARACTERS, max_size=12).map("".join), min_size=1, max_size=8)


@settings(max_examples=EXAMPLES or 300, deadline=None)
@given(PIECES)
def test_the_joined_text_is_the_string_join_makes(pieces: list[str]) -> None:
    saved, long_join.LONG_TEXT = long_join.LONG_TEXT, 0  # every text takes the long path
    try:
        joined = join_pieces(pieces)
    finally:
        long_join.LONG_TEXT = saved
    expected = "".join(pieces)
    assert joined == expected and hash(joined) == hash(expected)
    assert sys.getsizeof(joined) == sys.getsizeof(expected)  # the same width: a wider one would compare unequal
    assert joined.isascii() == expected.isascii() and {expected: 1}.get(joined) == 1
    assert [ord(c) for c in joined] == [ord(c) for c in expected]


@settings(max_examples=EXAMPLES or 300, deadline=None)
@given(PIECES, st.lists(st.tuples(st.integers(0, 7), st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=8))
def test_views_of_strings_join_to_the_string_their_slices_make(
    sources: list[str], cuts: list[tuple[int, int, int]]
) -> None:
    # A view of a wide source may hold only narrow characters: the result is as narrow as its characters.
    views = [
        (source, min(a, b, len(source)), min(max(a, b), len(source)))
        for n, a, b in cuts
        for source in [sources[n % len(sources)]]
    ]
    saved, long_join.LONG_TEXT = long_join.LONG_TEXT, 0  # every text takes the long path
    try:
        joined = join_views(views)
    finally:
        long_join.LONG_TEXT = saved
    expected = "".join([source[low:high] for source, low, high in views])
    assert joined == expected and hash(joined) == hash(expected)
    assert sys.getsizeof(joined) == sys.getsizeof(expected)  # the same width: a wider one would compare unequal
    assert joined.isascii() == expected.isascii() and {expected: 1}.get(joined) == 1


def test_a_wide_character_is_found_past_the_first_window_of_a_view(monkeypatch: pytest.MonkeyPatch) -> None:
    # Views are searched a window at a time (the lock passes between windows): one beyond the first still counts.
    monkeypatch.setattr(long_join, "LONG_TEXT", 0)
    monkeypatch.setattr(long_join, "SCAN_WINDOW", 4)
    source = "abcdefghij≈klmnop" + "é"
    for low, high in [(2, 17), (9, 11), (10, 11), (0, 10)]:
        joined = join_views([(source, low, high), ("x", 0, 1)])
        expected = source[low:high] + "x"
        assert joined == expected and sys.getsizeof(joined) == sys.getsizeof(expected)


MIXED = ["x" * 65_536] * 10 + ["é" * 65_536] * 5 + ["ā" * 1000, "😀" * 1000] + ["line\n" * 13_107] * 5


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the long path is CPython's")
@pytest.mark.parametrize(
    "pieces", [MIXED, ["line\n" * 13_107] * 20, ["é" * 65_536] * 16], ids=["mixed", "ascii", "latin-1"]
)
def test_a_long_text_is_copied_piece_by_piece_with_the_lock_released(
    pieces: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[int] = []
    memmove = ctypes.memmove  # a foreign function: the interpreter lock is released while it runs

    def counted(destination: int, source: int, size: int) -> int:
        copies.append(size)
        return memmove(destination, source, size)

    monkeypatch.setattr(ctypes, "memmove", counted)
    joined = join_pieces(pieces)
    assert joined == "".join(pieces) and len(joined) >= long_join.LONG_TEXT
    widest = max(map(ord, set(joined)))
    width = 4 if widest > 0xFFFF else 2 if widest > 0xFF else 1
    assert len(copies) == len(pieces) and sum(copies) == width * len(joined)  # each piece, at the text's width


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the long path is CPython's")
@pytest.mark.parametrize("piece", ["ā€", "āā€€" * 3 + "a", "éé", "é" * 9 + "a", "😀ā", "€"])
def test_a_piece_that_keeps_its_utf8_form_is_still_read_at_its_width(
    piece: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A two-byte piece whose UTF-8 form is one byte longer than twice its length has a four-byte piece's size.
    fresh = piece[:1] + piece[1:]  # not a constant shared with other tests
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize  # what C code reading a str as UTF-8 calls: the form is kept
    as_utf8.restype, as_utf8.argtypes = ctypes.c_void_p, (ctypes.py_object, ctypes.c_void_p)
    as_utf8(fresh, None)
    monkeypatch.setattr(long_join, "LONG_TEXT", 0)
    pieces = ["x" * 10, fresh, "ā" * 3, fresh]
    assert join_pieces(pieces) == "".join(pieces) and join_pieces([fresh]) == fresh


def test_a_short_text_is_joined_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctypes, "memmove", None)
    assert join_pieces(["a", "é", "😀"]) == "aé😀"
