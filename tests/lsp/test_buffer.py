"""The incremental text buffer equals a plain string with a fresh line index, whatever the edits."""

from __future__ import annotations

import os
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from scaling_core import LineIndex
from server.lsp import buffer as buffer_module
from server.lsp import long_join
from server.lsp.buffer import BufferIndex, TextBuffer
from server.lsp.documents import Document, apply_changes

LONG_TEXT = long_join.LONG_TEXT
EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))
PIECES = st.sampled_from(["\n", "\r\n", "\r", "x", "é", "😀", "\u2028", "ab\ncd", "\r\r\n\n", "", "line one\nline two"])
TEXTS = st.lists(PIECES, max_size=30).map("".join)
EDITS = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 6), TEXTS), min_size=1, max_size=25)


def same(buffer: TextBuffer, text: str) -> None:
    index, expected = BufferIndex(buffer), LineIndex(text)
    assert buffer.length == len(text)
    assert index.line_starts == list(expected.line_starts)
    for line in range(expected.line_count):
        assert index.line_end(line) == expected.line_end(line)
        assert index.line_text(line) == expected.line_text(line)
    for offset in range(len(text) + 1):
        assert index.position(offset) == expected.position(offset)
    assert buffer.slice(1, len(text) - 1) == text[1:-1]
    assert buffer.text == text


@settings(max_examples=EXAMPLES or 200, deadline=None)
@given(TEXTS, EDITS, st.lists(st.booleans(), min_size=25, max_size=25))
def test_edits_give_the_text_and_lines_of_a_plain_string(
    start: str, edits: list[tuple[float, int, str]], joins: list[bool]
) -> None:
    # Small blocks and chunks: edits cross them; the text is joined (re-chunked) between some edits.
    saved = buffer_module.BLOCK, buffer_module._SMALL, buffer_module.LINES_SLICE
    buffer_module.BLOCK, buffer_module._SMALL, buffer_module.LINES_SLICE = 3, 2, 3
    long_join.LONG_TEXT = 0  # joined as a long text is: piece by piece
    try:
        buffer, text = TextBuffer(start), start
        if joins[-1]:
            buffer.ready_for_edits()  # as the server does when it opens a draft (else the first edit finds the lines)
        for (where, remove, insert), join in zip(edits, joins):
            at = int(where * len(text))
            end = min(len(text), at + remove)
            buffer, text = buffer.replaced(at, end, insert), text[:at] + insert + text[end:]
            index = BufferIndex(buffer)
            assert index.line_starts == list(LineIndex(text).line_starts)
            if join:
                assert buffer.text == text and buffer.slice(0, len(text)) == text
        same(buffer, text)
    finally:
        buffer_module.BLOCK, buffer_module._SMALL, buffer_module.LINES_SLICE = saved
        long_join.LONG_TEXT = LONG_TEXT


@settings(max_examples=EXAMPLES or 200, deadline=None)
@given(TEXTS, st.integers(1, 8))
def test_an_opened_text_has_the_lines_of_a_fresh_index_whatever_the_slices(text: str, slice_size: int) -> None:
    saved = buffer_module.LINES_SLICE
    buffer_module.LINES_SLICE = slice_size  # its line starts are found a slice at a time
    try:
        same(TextBuffer(text), text)
    finally:
        buffer_module.LINES_SLICE = saved


def test_opening_a_draft_leaves_its_line_starts_to_be_found_off_the_event_loop() -> None:
    opened = Document("file:///draft.md", 1, "a\nb\r\nc\n")
    assert opened.buffer._lines is None  # did_open makes this version on the event loop: nothing found there
    opened.buffer.ready_for_edits()  # the analysis thread, before the first analysis
    assert opened.buffer._lines is not None
    assert opened.index.line_starts == [0, 2, 5, 7]


def test_an_edit_leaves_the_version_before_it_as_it_was() -> None:
    # An analysis may still be reading the previous version when the next edit arrives.
    before = TextBuffer("a\nb\nc\n")
    after = before.replaced(2, 3, "B\nB")
    assert before.text == "a\nb\nc\n" and BufferIndex(before).line_starts == [0, 2, 4, 6]
    assert after.text == "a\nB\nB\nc\n" and BufferIndex(after).line_starts == [0, 2, 4, 6, 8]


def test_typing_in_a_large_document_does_not_join_the_text_per_keystroke() -> None:
    document = Document("file:///big.md", 1, "line of text\n" * 50_000)
    for version in range(2, 200):
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(25_000, 4), types.Position(25_000, 4)), text="x"
        )
        document = apply_changes(document, version, [change], "utf-16")
    assert not document.buffer.joined  # pieces until something reads the whole text
    assert document.buffer.piece_count <= 3
    assert document.index.line_text(25_000) == "line" + "x" * 198 + " of text"
    assert document.text.count("x") == 198 + 50_000 and document.buffer.joined


def test_an_edit_after_the_text_was_joined_copies_only_what_it_touches() -> None:
    # An analysis joins the whole text; the next keystroke must not copy it again (20 MB: ~10 ms on the loop).
    import tracemalloc

    buffer = TextBuffer("line of text\n" * 800_000)  # ~10 MB, joined
    assert buffer.joined
    assert buffer.lines.count == 800_001  # found before any edit, as the server does (``ready_for_edits``)
    tracemalloc.start()
    try:
        edited = buffer.replaced(400_000 * 13 + 4, 400_000 * 13 + 4, "x")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    assert edited.slice(400_000 * 13, 400_000 * 13 + 14) == "linex of text\n"
    assert edited.length == buffer.length + 1 and not edited.joined
    assert edited.text == buffer.text[: 400_000 * 13 + 4] + "x" + buffer.text[400_000 * 13 + 4 :]


def _joined_with_peak(buffer: TextBuffer) -> tuple[str, int]:
    """The buffer's text, joined now, and the most memory the join held at once (bytes)."""
    import tracemalloc

    tracemalloc.start()
    try:
        text = buffer.text
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return text, peak


def test_joining_a_version_after_a_joined_one_copies_the_text_once() -> None:
    # A joined version is one view of its text; the next version's join copies each of its views from there
    # (a 20 MB draft: one 40 MB copy a keystroke, not two, each paying page faults for fresh memory).
    size = 13 * 800_000  # ~10 MB
    buffer = TextBuffer("line of text\n" * 800_000).replaced(4, 4, "x")
    assert buffer.text.startswith("linex of text")
    assert buffer.piece_count == 1  # held once: the joined text, not also a copy of it in pieces
    line = 400_000 * 13 + 1  # where line 400,000 starts, after the "x"
    text, peak = _joined_with_peak(buffer.replaced(line + 4, line + 4, "y"))
    assert len(text) == size + 2 and text[line : line + 14] == "liney of text\n"
    assert peak < 1.05 * (size + 2)  # the text once (ASCII: a byte a character)


def test_an_opened_text_is_copied_once_by_the_first_keystroke() -> None:
    size = 13 * 800_000
    opened = TextBuffer("line of text\n" * 800_000)
    opened.ready_for_edits()  # what the server does when a draft is opened, off the event loop
    assert opened.joined and opened.piece_count == 1
    text, peak = _joined_with_peak(opened.replaced(4, 4, "x"))
    assert text == "linex of text\n" + "line of text\n" * 799_999
    assert peak < 1.05 * (size + 1)


def test_a_wide_drafts_next_version_is_as_narrow_as_its_characters() -> None:
    # Views of a two-byte text that no longer hold its one wide character join to a one-byte string.
    opened = TextBuffer("line of text\n" * 100_000 + "µs ≈ 3\n" + "line of text\n" * 100_000)
    wide = 13 * 100_000 + 3  # where "≈" is
    edited = opened.replaced(wide, wide + 1, "=")
    text = edited.text
    expected = opened.text[:wide] + "=" + opened.text[wide + 1 :]
    assert text == expected and sys.getsizeof(text) == sys.getsizeof(expected) and not text.isascii()
    plain = edited.replaced(wide - 3, wide - 2, "u").text  # "µ" (Latin-1) gone too: ASCII
    assert plain.isascii() and sys.getsizeof(plain) == sys.getsizeof(plain.encode().decode())


def test_the_server_holds_an_opened_drafts_text_in_its_own_model_only() -> None:
    # pygls's own didOpen kept a copy in its workspace that no change reached: a stale second copy of each draft.
    from pygls.workspace import Workspace

    from server.lsp.app import create_server

    server = create_server()
    server.protocol._workspace = Workspace(None)  # as ``initialize`` makes it
    item = types.TextDocumentItem("file:///tmp/held_once.md", "markdown", 1, "# Held once\n")
    handlers = list(server.protocol.lsp_text_document__did_open(types.DidOpenTextDocumentParams(item)))
    assert len(handlers) == 1 and handlers[0][0].func.__name__ == "did_open"  # Margin's handler still runs
    assert server.workspace.text_documents == {}


def test_a_long_drafts_line_starts_take_8_bytes_a_line() -> None:
    import tracemalloc

    buffer = TextBuffer("line of text\n" * 800_000)
    tracemalloc.start()
    try:
        lines = buffer.lines  # found now: 800,001 line starts
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines.count == 800_001 and lines.start(400_000) == 13 * 400_000
    assert held < 9 * 800_001  # a list of ints held ~36 bytes a line (a 20 MB draft's: 16 MB)


def test_line_starts_take_four_bytes_a_line_unless_a_block_spans_more_than_two_gigabytes() -> None:
    from server.lsp.buffer import BLOCK, Lines

    starts = [n * 40 for n in range(3 * BLOCK)]
    lines = Lines.of(starts)
    assert [block.itemsize for block in lines.blocks] == [4, 4, 4]
    far = [0, 10, 2**31 - 1, 2**31, 2**33 + 7]  # offsets past what 4 bytes hold (no text needed to list them)
    lines = Lines.of(far + [2**34 + n for n in range(BLOCK)])
    assert [block.itemsize for block in lines.blocks] == [8, 4]
    assert [lines.start(n) for n in range(len(far))] == far
    assert lines.position(2**33 + 9) == (4, 2) and lines.line_of(2**34 + 3) == 5 + 3
    assert lines.flat() == far + [2**34 + n for n in range(BLOCK)]
