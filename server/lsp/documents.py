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


def apply_changes(
    document: Document, version: int, changes: Sequence[types.TextDocumentContentChangeEvent], encoding: str
) -> Document:
    """A new document version with ``changes`` applied in order."""
    text = document.text
    index: LineIndex | None = document.index
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            converter = PositionConverter(index if index is not None else LineIndex(text), encoding)
            span = converter.span(change.range)
            text = text[: span.start] + change.text + text[span.end :]
        else:
            text = change.text
        index = None  # the text changed: the next change needs a fresh index
    return Document(document.uri, version, text)
