"""A document's text under incremental edits: O(change + lines touched) per edit, the text built when read.

A ``didChange`` on a 20 MB draft must not copy 20 MB and index 400,000 lines
again per keystroke (measured: 11 ms for the copy alone; a burst of 1,000
keystrokes spent 74 s).  :class:`TextBuffer` keeps the text as pieces (views
of the last whole text, which an edit never copies, and what edits put between
them) and its line starts
in blocks of about :data:`BLOCK` lines, each block relative to its own start:
an edit re-reads the lines it touches and moves the starts of the blocks
after it.  Every edit makes a new buffer that shares what did not change, so
an analysis reading one version is never disturbed by the next.  The whole
text is joined once, when something reads it (an analysis starts).

Lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as :class:`~scaling_core.text.LineIndex`
says; :class:`BufferIndex` is a ``LineIndex`` over a buffer.
"""

from __future__ import annotations

import bisect
import re
from array import array

from scaling_core.text import LineIndex
from server.lsp.long_join import join_views

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: Line starts per block (a block is split at twice this).
BLOCK = 1024
#: The largest offset from its block's first line a 4-byte block holds (a block's offsets only grow).
_MOST_IN_INT = 2**31 - 1
#: Adjacent pieces shorter than this together are joined into one (typing makes many tiny pieces).
_SMALL = 4096


class Lines:
    """Line starts in blocks: ``bases[b] + blocks[b][i]`` is the start of line ``firsts[b] + i``.

    A block is an array of machine integers, 4 bytes a line (8 for a block over 2 GB of text): as a list of
    ints it took ~36 (a 20 MB draft's 440,000 lines: 16 MB), as 8-byte integers 3.5 MB.
    """

    __slots__ = ("blocks", "bases", "firsts")

    def __init__(self, blocks: list[array[int]], bases: list[int]) -> None:
        self.blocks, self.bases = blocks, bases
        firsts, count = [], 0
        for block in blocks:
            firsts.append(count)
            count += len(block)
        self.firsts = firsts

    @classmethod
    def of(cls, starts: list[int]) -> Lines:
        """The blocks of a flat list of line starts."""
        blocks, bases = [], []
        for at in range(0, len(starts), BLOCK):
            base = starts[at]
            within = [start - base for start in starts[at : at + BLOCK]]
            blocks.append(array("i" if within[-1] <= _MOST_IN_INT else "q", within))
            bases.append(base)
        return cls(blocks, bases)

    @property
    def count(self) -> int:
        """Number of lines."""
        return self.firsts[-1] + len(self.blocks[-1])

    def start(self, line: int) -> int:
        """Where ``line`` starts."""
        b = bisect.bisect_right(self.firsts, line) - 1
        return self.bases[b] + self.blocks[b][line - self.firsts[b]]

    def line_of(self, offset: int) -> int:
        """The line holding ``offset`` (the last line starting at or before it)."""
        b = bisect.bisect_right(self.bases, offset) - 1
        return self.firsts[b] + bisect.bisect_right(self.blocks[b], offset - self.bases[b]) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """The line holding ``offset`` and how far into it ``offset`` is (:meth:`line_of` and :meth:`start` in one)."""
        b = bisect.bisect_right(self.bases, offset) - 1
        block, within = self.blocks[b], offset - self.bases[b]
        number = bisect.bisect_right(block, within) - 1
        return self.firsts[b] + number, within - block[number]

    def flat(self) -> list[int]:
        """Every line start, in one list."""
        starts: list[int] = []
        for base, block in zip(self.bases, self.blocks):
            starts.extend([base + start for start in block])
        return starts

    def replaced(self, first: int, last: int, starts: list[int], delta: int) -> Lines:
        """Lines ``first..last`` (inclusive) start at ``starts`` instead, and every later line ``delta`` further on."""
        b0 = bisect.bisect_right(self.firsts, first) - 1
        b1 = bisect.bisect_right(self.firsts, last + 1) - 1 if last + 1 < self.count else len(self.blocks) - 1
        flat = []
        for b in range(b0, b1 + 1):
            base = self.bases[b]
            flat.extend([base + start for start in self.blocks[b]])
        offset = self.firsts[b0]
        flat[first - offset : last + 1 - offset] = starts
        tail = first - offset + len(starts)  # where the kept lines after ``last`` now begin
        flat[tail:] = [start + delta for start in flat[tail:]]
        middle = Lines.of(flat) if flat else Lines([], [])
        blocks = self.blocks[:b0] + middle.blocks + self.blocks[b1 + 1 :]
        bases = self.bases[:b0] + middle.bases + [base + delta for base in self.bases[b1 + 1 :]]
        return Lines(blocks, bases)


class TextBuffer:
    """One version of a document's text: pieces (joined when read) and their :class:`Lines`.

    A piece is a view ``(source, low, high)``: ``source[low:high]``, sliced only
    when the text is joined, so an edit never copies the parts it leaves alone
    (a keystroke after an analysis joined 20 MB would otherwise copy it again).
    Once joined, a version is one view of its whole text, and the next
    version's pieces are views of that: joining it copies each view straight
    from there (:func:`~server.lsp.long_join.join_views`), so the text is
    copied once and held once.  Keeping the joined text again in strings of
    64K characters, to join those whole, held a 20 MB draft twice (40 MB a copy).
    """

    __slots__ = ("_layout", "_text", "length", "_lines")

    def __init__(self, text: str, lines: Lines | None = None) -> None:
        #: The pieces and where each ends, replaced together (one assignment) when the text is joined.
        self._layout: tuple[tuple[tuple[str, int, int], ...], list[int]] = (((text, 0, len(text)),), [len(text)])
        self._text: str | None = text
        self.length = len(text)
        #: Found when first read (:attr:`lines`), not here: see there.
        self._lines = lines

    @property
    def lines(self) -> Lines:
        """Where each line starts, found on first read for a version made from a whole text.

        Opening a document makes its first version on the event loop; finding
        the line starts of a 20 MB draft there held the loop for 150-260 ms.  The
        language server finds them in the analysis thread instead
        (:meth:`ready_for_edits`), a slice of the text at a time; an edit that
        comes first finds them itself, with the same result.
        """
        lines = self._lines
        if lines is None:
            text = self._text
            assert text is not None  # only a version made from a whole text starts without its lines
            lines = self._lines = _lines_of(text)
        return lines

    @classmethod
    def _made(cls, pieces: list[tuple[str, int, int]], lines: Lines) -> TextBuffer:
        buffer = cls.__new__(cls)
        buffer._layout = _layout(pieces)
        buffer._text, buffer.length, buffer._lines = None, buffer._layout[1][-1], lines
        return buffer

    @property
    def piece_count(self) -> int:
        """How many pieces this version's text is in."""
        return len(self._layout[0])

    @property
    def joined(self) -> bool:
        """Whether the whole text has been joined (reading :attr:`text` is then free)."""
        return self._text is not None

    @property
    def text(self) -> str:
        """The whole text (joined on first read)."""
        text = self._text
        if text is None:
            text = join_views(self._layout[0])  # a long text: the lock is released while each view is copied
            # An edit reading the layout on the event loop meanwhile sees the old one or this one, each whole.
            self._layout = _layout([(text, 0, len(text))])
            self._text = text
        return text

    def ready_for_edits(self) -> None:
        """Find the line starts.

        The language server calls this in the analysis thread when a draft is
        opened, so its first keystroke does not find every line start on the
        event loop.
        """
        self.lines  # noqa: B018 - found now, off the event loop

    def slice(self, start: int, end: int) -> str:
        """``text[start:end]``, without joining the whole text."""
        if self._text is not None:
            return self._text[start:end]
        start, end = max(0, start), min(end, self.length)
        if start >= end:
            return ""
        pieces, ends = self._layout
        first = bisect.bisect_right(ends, start)
        out = []
        for number in range(first, len(pieces)):
            source, low, high = pieces[number]
            begin = ends[number] - (high - low)
            out.append(source[low + max(0, start - begin) : low + min(end, ends[number]) - begin])
            if ends[number] >= end:
                break
        return "".join(out)

    def replaced(self, start: int, end: int, new: str) -> TextBuffer:
        """A new version: ``text[start:end]`` replaced by ``new`` (this version is unchanged)."""
        lines = self.lines
        count = lines.count
        first = lines.line_of(max(start - 1, 0))  # a CR before the edit may pair with an LF it inserts
        last = lines.line_of(end)
        window_start = lines.start(first)
        window_end = lines.start(last + 1) if last + 1 < count else self.length
        delta = len(new) - (end - start)
        window = self.slice(window_start, start) + new + self.slice(end, window_end)
        starts = [window_start + match.end() for match in _LINE_BREAK.finditer(window)]
        if last + 1 < count:
            starts.pop()  # the break ending the window starts line ``last + 1``, which is kept (moved)
        new_lines = lines.replaced(first + 1, last, starts, delta)
        return TextBuffer._made(self._edited(start, end, new), new_lines)

    def _edited(self, start: int, end: int, new: str) -> list[tuple[str, int, int]]:
        """The pieces with ``[start, end)`` replaced by ``new``, small neighbours joined (views are not copied)."""
        pieces, ends = self._layout
        first = min(bisect.bisect_right(ends, start), len(pieces) - 1)
        last = min(bisect.bisect_left(ends, end), len(pieces) - 1)
        source, low, high = pieces[first]
        left = (source, low, low + start - (ends[first] - (high - low)))
        source, low, high = pieces[last]
        right = (source, low + end - (ends[last] - (high - low)), high)
        before, after = list(pieces[:first]), list(pieces[last + 1 :])
        middle = new
        if _size(left) + len(middle) <= _SMALL:
            middle, left = _read(left) + middle, _EMPTY
            if before and _size(before[-1]) + len(middle) <= _SMALL:
                middle = _read(before.pop()) + middle
        if _size(right) + len(middle) <= _SMALL:
            middle, right = middle + _read(right), _EMPTY
            if after and _size(after[0]) + len(middle) <= _SMALL:
                middle = middle + _read(after.pop(0))
        edited = [piece for piece in (*before, left, (middle, 0, len(middle)), right, *after) if piece[2] > piece[1]]
        return edited or [_EMPTY]


_EMPTY = ("", 0, 0)
#: Characters of text whose line starts are found in one call (~3 ms): finding a 20 MB text's in one call
#: of ``LineIndex`` held the interpreter lock, and so the event loop, for 80-100 ms at a time (in slices: ~20).
LINES_SLICE = 1 << 19


def _lines_of(text: str) -> Lines:
    """The :class:`Lines` of ``text``, found a slice at a time (each slice ends after a ``\\n``, so no
    ``\\r\\n`` is cut in two)."""
    starts: list[int] = []
    low, length = 0, len(text)
    while True:
        cut = text.find("\n", low + LINES_SLICE) + 1 if low + LINES_SLICE < length else 0
        high = cut or length
        found = LineIndex(text[low:high]).line_starts
        if cut:
            found = found[:-1]  # the line after the cut starts the next slice
        starts.extend([low + start for start in found] if low else found)
        if not cut:
            return Lines.of(starts)
        low = high


def _layout(pieces: list[tuple[str, int, int]]) -> tuple[tuple[tuple[str, int, int], ...], list[int]]:
    """``pieces`` (at least one: the empty piece for an empty text) and where each ends."""
    if not pieces:
        return (_EMPTY,), [0]
    ends, total = [], 0
    for _source, low, high in pieces:
        total += high - low
        ends.append(total)
    return tuple(pieces), ends


def _size(piece: tuple[str, int, int]) -> int:
    return piece[2] - piece[1]


def _read(piece: tuple[str, int, int]) -> str:
    source, low, high = piece
    return source[low:high]


class BufferIndex(LineIndex):
    """A :class:`LineIndex` over a :class:`TextBuffer` (its ``text`` is joined when first read)."""

    def __init__(self, buffer: TextBuffer) -> None:  # no LineIndex.__init__: the buffer has the line starts
        self.buffer = buffer
        self.has_cr = True  # not known without reading the whole text: line ends are always looked at

    @property
    def _lines(self) -> Lines:
        return self.buffer.lines  # found on first read (``TextBuffer.lines``)

    @property
    def text(self) -> str:  # type: ignore[override]
        """The whole text."""
        return self.buffer.text

    @property
    def line_starts(self) -> list[int]:  # type: ignore[override]
        """Every line start (built on each read: prefer :meth:`line_start`)."""
        return self._lines.flat()

    @property
    def line_count(self) -> int:
        """Number of lines; a trailing newline opens an empty last line."""
        return self._lines.count

    def line_start(self, line: int) -> int:
        """Offset of the start of ``line``."""
        return self._lines.start(line)

    def position(self, offset: int) -> tuple[int, int]:
        """The 0-based ``(line, column)`` of ``offset`` in code points."""
        buffer = self.buffer
        return buffer.lines.position(max(0, min(offset, buffer.length)))

    def offset(self, line: int, column: int) -> int:
        """The offset of a 0-based ``(line, column)``, clamped to the line."""
        if line >= self._lines.count:
            return self.buffer.length
        start = self._lines.start(max(line, 0))
        return min(start + max(column, 0), self.line_end(line))

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line``, before its line break."""
        if line + 1 < self._lines.count:
            end = self._lines.start(line + 1)
            if end - 2 >= self._lines.start(line) and self.buffer.slice(end - 2, end) == "\r\n":
                return end - 2
            return end - 1
        return self.buffer.length

    def line_text(self, line: int) -> str:
        """The text of ``line`` without its line break."""
        return self.buffer.slice(self._lines.start(line), self.line_end(line))

    def line_start_at(self, offset: int) -> int:
        """Offset of the start of the line holding ``offset``."""
        return self._lines.start(self.position(offset)[0])
