"""Spans and line indexing in code-point offsets.

The core speaks only code-point offsets into the document text.  Lines end at
``\\n``, ``\\r\\n`` or ``\\r`` and nothing else (the LSP rule): U+2028 and the
other separators that :meth:`str.splitlines` honours are ordinary characters.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import NamedTuple, Protocol, TypeVar

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Span(NamedTuple):
    """A half-open range ``[start, end)`` of code-point offsets (a cheap immutable tuple)."""

    start: int
    end: int

    def contains(self, offset: int) -> bool:
        """Whether ``offset`` lies inside the span (end inclusive, for cursors)."""
        return self.start <= offset <= self.end


#: ``new_span(Span, (start, end))`` makes a span without NamedTuple's Python-level ``__new__``:
#: 90 ns against 150 ns, for the hot paths that make one per token, node or region.
new_span = tuple.__new__


class LineIndex:
    """Maps offsets to 0-based (line, column) pairs and back, in O(log n).

    The line starts are an array of 4-byte integers (8-byte past 2 GB of text): a list took 8 bytes a line
    and an integer object of 32 bytes for nearly every start (a 20 MB draft's: ~17 MB, now ~1.8 MB).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        #: Whether any line ends in CR LF or CR (a line's end is then not always one before the next start).
        self.has_cr = "\r" in text
        if self.has_cr:
            starts = [0]
            starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
        else:  # only \n breaks: line lengths from str.split, summed in C (3x faster on 10k lines)
            starts = list(accumulate(map((1).__add__, map(len, text.split("\n"))), initial=0))
            starts.pop()
        self.line_starts: Sequence[int] = array("i" if len(text) < 1 << 31 else "q", starts)

    @property
    def line_count(self) -> int:
        """Number of lines; a trailing newline opens an empty last line."""
        return len(self.line_starts)

    def line_start(self, line: int) -> int:
        """Offset of the start of ``line`` (which exists)."""
        return self.line_starts[line]

    def position(self, offset: int) -> tuple[int, int]:
        """Return the 0-based ``(line, column)`` of ``offset`` in code points."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line, offset - self.line_starts[line]

    def offset(self, line: int, column: int) -> int:
        """Return the offset of a 0-based ``(line, column)``, clamped to the line."""
        if line >= len(self.line_starts):
            return len(self.text)
        start = self.line_starts[max(line, 0)]
        return min(start + max(column, 0), self.line_end(line))

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line``, before its line break."""
        if line + 1 < len(self.line_starts):
            end = self.line_starts[line + 1]
            if self.has_cr and self.text.startswith("\r\n", end - 2) and end - 2 >= self.line_starts[line]:
                return end - 2
            return end - 1
        return len(self.text)

    def line_text(self, line: int) -> str:
        """The text of ``line`` without its line break."""
        return self.text[self.line_starts[line] : self.line_end(line)]

    def line_start_at(self, offset: int) -> int:
        """Offset of the start of the line holding ``offset``."""
        return self.line_starts[self.position(offset)[0]]

    def line_end_at(self, offset: int) -> int:
        """Offset of the end of the line holding ``offset``, before its line break."""
        return self.line_end(self.position(offset)[0])


class _Spanned(Protocol):
    @property
    def span(self) -> Span: ...


_S = TypeVar("_S", bound=_Spanned)


def holding_position(items: Sequence[_S]) -> Callable[[int], int]:
    """Where in ``items`` (sorted by start) the outermost item whose span holds an offset
    (``start <= offset < end``) is, or -1.

    Items are disjoint as problems are, or nest (a broken problem marker makes
    one problem hold others): the outermost is the first holding the offset, as
    a single pass over the text assigns it.  The starts and the furthest end
    reached so far are listed once, then each offset is bisected: O(log n).
    """
    starts = [item.span.start for item in items]
    reach: list[int] = []
    furthest = -1
    for item in items:
        furthest = max(furthest, item.span.end)
        reach.append(furthest)

    def position(offset: int) -> int:
        at = bisect.bisect_right(reach, offset)  # the first item reaching past offset: every one before ended
        return at if at < len(starts) and starts[at] <= offset else -1

    return position
