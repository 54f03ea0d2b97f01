"""Offsets and LSP positions convert both ways, astral characters included (UTF-16 surrogate pairs).

A position inside a character (between a surrogate pair's two units, or inside a UTF-8 sequence) means
the start of that character, in every conversion (docs/editors.md).
"""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from scaling_core import LineIndex
from server.lsp.buffer import BufferIndex, TextBuffer
from server.lsp.convert import PositionConverter
from server.lsp.documents import Document, apply_changes

EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))
PIECES = st.sampled_from(["😀", "𝑥", "é", "a", "€", "\n", "\r\n", "\r", "x = 1", "\U0010ffff", "\u2028", "\ud800"])
TEXTS = st.lists(PIECES, max_size=40).map("".join)
ENCODINGS = st.sampled_from(["utf-16", "utf-8", "utf-32"])
UNIT = {"utf-16": ("utf-16-le", 2), "utf-8": ("utf-8", 1), "utf-32": ("utf-32-le", 4)}


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in the encoding's code units, computed by Python's codecs (a lone surrogate, as
    JSON's ``"\\ud800"`` reads, as one UTF-16 unit: as VS Code counts it)."""
    codec, size = UNIT[encoding]
    return len(text.encode(codec, "surrogatepass")) // size


def converters(text: str, encoding: str) -> list[PositionConverter]:
    """A converter over a plain line index and one over an edited buffer (not joined yet)."""
    edited = TextBuffer("?" + text).replaced(0, 1, "")
    return [PositionConverter(LineIndex(text), encoding), PositionConverter(BufferIndex(edited), encoding)]


@settings(max_examples=EXAMPLES or 300, deadline=None)
@given(TEXTS, ENCODINGS)
def test_offset_to_position_to_offset_is_the_identity(text: str, encoding: str) -> None:
    index = LineIndex(text)
    for converter in converters(text, encoding):
        for offset in range(len(text) + 1):
            line, column = index.position(offset)
            if column > len(index.line_text(line)):
                continue  # between the CR and LF of a line break: no position of its own
            position = converter.position(offset)
            assert position.line == line
            assert position.character == units(index.line_text(line)[:column], encoding)
            assert converter.offset(position) == offset


@settings(max_examples=EXAMPLES or 300, deadline=None)
@given(TEXTS, ENCODINGS, st.data())
def test_a_position_inside_a_character_means_its_start(text: str, encoding: str, data: st.DataObject) -> None:
    index = LineIndex(text)
    line = data.draw(st.integers(0, index.line_count - 1))
    line_text = index.line_text(line)
    character = data.draw(st.integers(0, units(line_text, encoding) + 3))
    # the start of the character holding that unit: the longest prefix no longer than it
    column = max(c for c in range(len(line_text) + 1) if units(line_text[:c], encoding) <= character)
    for converter in converters(text, encoding):
        assert converter.offset(types.Position(line, character)) == index.line_start(line) + column


def test_an_edit_whose_range_starts_and_ends_inside_surrogate_pairs() -> None:
    # "a😀b𝑥c": 😀 is units 1-2, 𝑥 units 4-5; an edit from 2 (inside 😀) to 5 (inside 𝑥) replaces "😀b",
    # as VS Code, which moves a position inside a pair to the start of its character, does.
    document = Document("file:///d.md", 1, "a😀b𝑥c\n")
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 2), types.Position(0, 5)), text="Z"
    )
    assert apply_changes(document, 2, [edit], "utf-16").text == "aZ𝑥c\n"
    converter = document.converter("utf-16")
    assert converter.range(converter.span(edit.range)) == types.Range(types.Position(0, 1), types.Position(0, 4))


def test_a_text_within_the_bmp_counts_one_utf16_unit_per_character_without_encoding() -> None:
    text = "It is 174 µs<!-- ≈ t --> and é€\u2028 more.\nSo `2 * 3 = 6` ≈ 6.\n" * 20
    converter = PositionConverter(LineIndex(text), "utf-16")
    assert converter.ascii  # one unit per character: no line's prefix is encoded
    index = LineIndex(text)
    for offset in range(0, len(text), 7):
        line, column = index.position(offset)
        assert converter.units(offset) == (line, units(index.line_text(line)[:column], "utf-16"))
    astral = PositionConverter(LineIndex(text + "😀 x"), "utf-16")
    assert not astral.ascii and astral.position(len(text) + 2) == types.Position(40, 3)  # 😀 is two units
    assert not PositionConverter(LineIndex(text), "utf-8").ascii  # in UTF-8, µ is two units
