"""The only module that converts between core spans (code points) and LSP positions.

LSP characters count UTF-16 code units by default, or UTF-8 bytes / UTF-32 code
points when negotiated.  Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (our
:class:`LineIndex`), so U+2028 and friends are ordinary characters.
"""

from __future__ import annotations

from lsprotocol import types

from scaling_core import Diagnostic, LineIndex, Severity, Span
from server.lsp.long_join import within_bmp


def _units(char: str, encoding: str) -> int:
    if encoding == "utf-32":
        return 1
    point = ord(char)
    if encoding == "utf-8":
        return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
    return 2 if point > 0xFFFF else 1


class PositionConverter:
    """Converts offsets of one text version to and from LSP positions."""

    def __init__(self, index: LineIndex, encoding: str) -> None:
        self.index = index
        self.encoding = str(encoding)
        #: The buffer the index reads, if any: its text is read without joining it.
        self._buffer = getattr(index, "buffer", None)
        #: Whether every character is one unit; when the whole text has not been joined yet
        #: (``buffer.py``), that is found out line by line instead.  In UTF-16, a text without characters
        #: beyond U+FFFF (``µ``, ``≈`` and ``é`` are within) counts one unit per character: known at once
        #: from how CPython holds the string, so publishing ~200 diagnostics after a ``µ`` encodes no prefix.
        buffer = self._buffer
        if self.encoding == "utf-32":
            self.ascii = True
        elif buffer is not None and not buffer.joined:
            self.ascii = False
        else:
            text = index.text
            self.ascii = text.isascii() or (self.encoding == "utf-16" and within_bmp(text))

    def position(self, offset: int) -> types.Position:
        """The LSP position of a code-point offset."""
        line, character = self.units(offset)
        return types.Position(line=line, character=character)

    def units(self, offset: int) -> tuple[int, int]:
        """The LSP line and character of a code-point offset (:meth:`position` without the object).

        Publishing the ~400 failing checks of a draft with one non-ASCII character
        converts ~900 offsets per keystroke: reading the line before each and counting
        its units a character at a time took ~5 ms of it; the encoders count in C.
        """
        line, column = self.index.position(offset)
        if self.ascii or not column:
            return line, column
        prefix = self._between(offset - column, offset)
        if prefix.isascii():
            return line, column
        if self.encoding == "utf-8":
            return line, len(prefix.encode("utf-8", "surrogatepass"))
        return line, len(prefix.encode("utf-16-le", "surrogatepass")) >> 1  # a lone surrogate: one unit

    def _between(self, start: int, end: int) -> str:
        """The text from ``start`` to ``end`` (of the buffer, without joining it, when the index reads one)."""
        buffer = self._buffer
        return buffer.slice(start, end) if buffer is not None else self.index.text[start:end]

    def offset(self, position: types.Position) -> int:
        """The code-point offset of an LSP position (clamped to its line).

        A position inside a character (between the two UTF-16 units of 😀, or
        inside a UTF-8 sequence) means the start of that character, in every
        conversion: a range, an edit's range, a hover's position.
        """
        line = position.line
        index = self.index
        if line >= index.line_count:
            return index.offset(line, 0)  # the end of the text
        start = index.line_start(line)
        end = index.line_end(line)
        if self.ascii:
            return min(start + position.character, end)
        text = index.line_text(line)
        if text.isascii():
            return min(start + position.character, end)
        wanted, counted, column = position.character, 0, 0
        while column < len(text) and counted < wanted:
            units = _units(text[column], self.encoding)
            if counted + units > wanted:
                break  # inside a character (between a surrogate pair's halves): its start, as VS Code does
            counted += units
            column += 1
        return start + column

    def range(self, span: Span) -> types.Range:
        """The LSP range of a span."""
        return types.Range(start=self.position(span.start), end=self.position(span.end))

    def span(self, lsp_range: types.Range) -> Span:
        """The span of an LSP range."""
        return Span(self.offset(lsp_range.start), self.offset(lsp_range.end))


_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def diagnostic(converter: PositionConverter, uri: str, item: Diagnostic) -> types.Diagnostic:
    """A core diagnostic as an LSP diagnostic (notes appended, related locations kept)."""
    message = item.message + "".join(f"\n{note}" for note in item.notes)
    related = [
        types.DiagnosticRelatedInformation(types.Location(uri, converter.range(r.span)), r.message)
        for r in item.related
    ]
    return types.Diagnostic(
        range=converter.range(item.span),
        message=message,
        severity=_SEVERITY[item.severity],
        code=item.code,
        source="margin",
        related_information=related or None,
    )


def information(converter: PositionConverter, span: Span, message: str) -> types.Diagnostic:
    """An information-level diagnostic of Margin's without a catalogue code (the coverage notes)."""
    return types.Diagnostic(
        range=converter.range(span), message=message, severity=types.DiagnosticSeverity.Information, source="margin"
    )
