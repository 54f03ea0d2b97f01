"""Our own versioned document model: text per uri, incremental edits applied in code points.

A version's text is a :class:`~server.lsp.buffer.TextBuffer`: an edit costs
the change and the lines it touches, and the whole text is joined only when
it is read (an analysis starts), so a burst of keystrokes is cheap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from scaling_core import LineIndex
from server.lsp.buffer import BufferIndex, TextBuffer
from server.lsp.convert import PositionConverter


def uri_to_path(uri: str) -> str:
    """A file URI's path (other schemes keep the URI itself as the path)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def path_to_uri(path: str) -> str:
    """The file URI of a path (URIs pass through)."""
    return path if "://" in path else Path(path).resolve().as_uri()


class Document:
    """One open document at one version (never changed: an edit makes the next version)."""

    __slots__ = ("uri", "version", "buffer", "index")

    def __init__(self, uri: str, version: int, text: str | TextBuffer) -> None:
        self.uri = uri
        self.version = version
        self.buffer = text if isinstance(text, TextBuffer) else TextBuffer(text)
        #: The line index of this version (its ``text`` is the whole text, joined when first read).
        self.index: LineIndex = BufferIndex(self.buffer)

    @property
    def text(self) -> str:
        """The whole text of this version."""
        return self.buffer.text

    @property
    def path(self) -> str:
        """The file path the engine knows this document by."""
        return uri_to_path(self.uri)

    def converter(self, encoding: str) -> PositionConverter:
        """Position conversion for this version of the text."""
        return PositionConverter(self.index, encoding)


class OpenTexts(Mapping[str, str]):
    """The open documents' texts by file path: the import loader's overlay.

    A live view of ``documents`` (uri -> :class:`Document`): an import
    resolved later sees the versions open then.
    """

    def __init__(self, documents: Mapping[str, Document]) -> None:
        self._documents = documents
        #: Open uris by path, for the uris open when it was built.
        self._by_path: dict[str, str] = {}
        self._uris: frozenset[str] = frozenset()

    def __getitem__(self, path: str) -> str:
        uris = frozenset(list(self._documents))  # a snapshot: read from the analysis thread
        if uris != self._uris:
            self._by_path, self._uris = {uri_to_path(uri): uri for uri in uris}, uris
        document = self._documents.get(self._by_path.get(path, ""))
        if document is None:
            raise KeyError(path)
        return document.text

    def __iter__(self) -> Iterator[str]:
        return iter([document.path for document in self._documents.values()])

    def __len__(self) -> int:
        return len(self._documents)


class InvalidEdit(ValueError):
    """A change that cannot be applied as the editor applied it (its range ends before it starts)."""


def apply_changes(
    document: Document, version: int, changes: Sequence[types.TextDocumentContentChangeEvent], encoding: str
) -> Document:
    """A new document version with ``changes`` applied in order.

    A position past the end of its line or of the text means the end (LSP
    3.17); a range that ends before it starts, or a negative position, raises
    :class:`InvalidEdit`: guessing what the editor did would leave our text
    different from its own (docs/editors.md, "Edits the server cannot apply").
    """
    buffer = document.buffer
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start, end = change.range.start, change.range.end
            if min(start.line, start.character, end.line, end.character) < 0:
                raise InvalidEdit("an edit with a negative position")
            if (end.line, end.character) < (start.line, start.character):
                raise InvalidEdit(f"an edit whose range ends ({end.line}:{end.character}) before it starts "
                                  f"({start.line}:{start.character})")  # fmt: skip
            span = PositionConverter(BufferIndex(buffer), encoding).span(change.range)
            buffer = buffer.replaced(span.start, span.end, change.text)
        else:
            buffer = TextBuffer(change.text)
    return Document(document.uri, version, buffer)


def whole_text_again(
    uri: str, version: int, changes: Sequence[types.TextDocumentContentChangeEvent], encoding: str
) -> Document | None:
    """The document rebuilt from the last whole-text change in ``changes`` (and those after it), or None."""
    wholes = [i for i, change in enumerate(changes) if isinstance(change, types.TextDocumentContentChangeWholeDocument)]
    if not wholes:
        return None
    first = changes[wholes[-1]]
    return apply_changes(Document(uri, version, first.text), version, changes[wholes[-1] + 1 :], encoding)
