"""Our own versioned document model: text per uri, incremental edits applied in code points."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from scaling_core import LineIndex
from server.lsp.convert import PositionConverter


def uri_to_path(uri: str) -> str:
    """A file URI's path (other schemes keep the URI itself as the path)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def path_to_uri(path: str) -> str:
    """The file URI of a path (URIs pass through)."""
    return path if "://" in path else Path(path).resolve().as_uri()


@dataclass
class Document:
    """One open document at one version."""

    uri: str
    version: int
    text: str
    index: LineIndex = field(init=False)

    def __post_init__(self) -> None:
        self.index = LineIndex(self.text)

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

    def __getitem__(self, path: str) -> str:
        for document in list(self._documents.values()):  # a snapshot: read from the analysis thread
            if document.path == path:
                return document.text
        raise KeyError(path)

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
    text = document.text
    index: LineIndex | None = document.index
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start, end = change.range.start, change.range.end
            if min(start.line, start.character, end.line, end.character) < 0:
                raise InvalidEdit("an edit with a negative position")
            if (end.line, end.character) < (start.line, start.character):
                raise InvalidEdit(f"an edit whose range ends ({end.line}:{end.character}) before it starts "
                                  f"({start.line}:{start.character})")  # fmt: skip
            converter = PositionConverter(index if index is not None else LineIndex(text), encoding)
            span = converter.span(change.range)
            text = text[: span.start] + change.text + text[span.end :]
        else:
            text = change.text
        index = None  # the text changed: the next change needs a fresh index
    return Document(document.uri, version, text)


def whole_text_again(
    uri: str, version: int, changes: Sequence[types.TextDocumentContentChangeEvent], encoding: str
) -> Document | None:
    """The document rebuilt from the last whole-text change in ``changes`` (and those after it), or None."""
    wholes = [i for i, change in enumerate(changes) if isinstance(change, types.TextDocumentContentChangeWholeDocument)]
    if not wholes:
        return None
    first = changes[wholes[-1]]
    return apply_changes(Document(uri, version, first.text), version, changes[wholes[-1] + 1 :], encoding)
