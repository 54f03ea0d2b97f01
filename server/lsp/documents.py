"""Our own versioned document model: text per uri, incremental edits applied in code points.

A version's text is a :class:`~server.lsp.buffer.TextBuffer`: an edit costs
the change and the lines it touches, and the whole text is joined only when
it is read (an analysis starts), so a burst of keystrokes is cheap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from scaling_core import LineIndex
from scaling_core.document.imports import Reads, SharedImport
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


class OpenDocuments(MutableMapping[str, Document]):
    """The open documents by uri, counting their changes: :attr:`generation` grows with every
    version stored, document opened or closed (what the import loader may answer changes only then)."""

    def __init__(self) -> None:
        self._documents: dict[str, Document] = {}
        self.generation = 0

    def __getitem__(self, uri: str) -> Document:
        return self._documents[uri]

    def __setitem__(self, uri: str, document: Document) -> None:
        self._documents[uri] = document
        self.generation += 1

    def __delitem__(self, uri: str) -> None:
        del self._documents[uri]
        self.generation += 1

    def __iter__(self) -> Iterator[str]:
        return iter(self._documents)

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, uri: object) -> bool:
        return uri in self._documents

    def snapshot(self) -> dict[str, Document]:
        """The documents open now, copied at once (safe from the analysis thread)."""
        return self._documents.copy()


class OpenTexts(Mapping[str, str]):
    """The open documents' texts by file path: the import loader's overlay.

    A live view of ``documents``: an import resolved later sees the versions open then.
    """

    def __init__(self, documents: OpenDocuments) -> None:
        self._documents = documents
        #: (``documents.generation``, the uris open then, those uris by path): one value, replaced
        #: at once, as analyses in more than one thread may read it.
        self._view: tuple[int, frozenset[str], dict[str, str]] = (-1, frozenset(), {})

    def __getitem__(self, path: str) -> str:
        generation, uris, by_path = view = self._view
        if self._documents.generation != generation:  # the uris as a snapshot: read from analysis threads
            generation, now = self._documents.generation, frozenset(self._documents.snapshot())
            view = (generation, now, by_path if now == uris else {uri_to_path(uri): uri for uri in now})
            self._view = view
        document = self._documents.get(view[2].get(path, ""))
        if document is None:
            raise KeyError(path)
        return document.text

    def __iter__(self) -> Iterator[str]:
        return iter([document.path for document in self._documents.snapshot().values()])

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


class ImportReaders:
    """Which open documents read which drafts through imports, as their latest analyses found.

    Also the loader's answers while no document changes: the analyses of the
    drafts importing an edited one (run one after the other) resolve each
    ``import`` once between them, and see one set of files.
    """

    def __init__(self) -> None:
        #: The drafts each document's latest analysis read (resolved paths), and whether one of
        #: its imports was not found (a draft opened or written later may be the one).
        self.depends: dict[str, tuple[frozenset[str], bool]] = {}
        #: The other way round: by resolved path, the documents whose latest analysis read it.
        self._read_by: dict[str, set[str]] = {}
        self._answers: dict[tuple[str, str], tuple[str, str] | None] = {}
        #: The imported drafts' analyses found to read what ``_answers`` holds.
        self._checked: dict[str, SharedImport] = {}
        self._answered_at: tuple[int, object] = (-1, None)

    def answers(
        self, documents: OpenDocuments, loader: object
    ) -> tuple[dict[tuple[str, str], tuple[str, str] | None], dict[str, SharedImport]]:
        """What ``loader`` answered, by (importing path, target as written), while ``documents`` and the
        loader stay as they are, and the imported drafts' analyses found to read it (the analysis thread's)."""
        now = (documents.generation, loader)
        if now != self._answered_at:
            self._answers, self._checked, self._answered_at = {}, {}, now
        return self._answers, self._checked

    def forget_answers(self) -> None:
        """Ask the loader again (the settings changed, or answers from outside the engine)."""
        self._answers, self._checked = {}, {}

    def is_read(self, path: str) -> bool:
        """Whether another document's latest analysis read ``path`` through an import."""
        return path in self._read_by

    def record(self, uri: str, read: Reads) -> None:
        """Remember what the latest analysis of ``uri`` read through imports."""
        before = self.depends.get(uri)
        self.depends[uri] = (read.paths, read.missed)
        gone = before[0] - read.paths if before is not None else frozenset()
        new = read.paths - before[0] if before is not None else read.paths
        for path in gone:
            readers = self._read_by.get(path)
            if readers is not None:
                readers.discard(uri)
                if not readers:
                    del self._read_by[path]
        for path in new:
            self._read_by.setdefault(path, set()).add(uri)

    def forget(self, uri: str) -> None:
        """``uri`` closed: it reads nothing now."""
        self.record(uri, Reads(()))
        self.depends.pop(uri, None)

    def importers_of(self, uri: str, documents: Mapping[str, Document]) -> list[str]:
        """The other open documents that may read ``uri`` through an import (nested ones too).

        Those whose latest analysis read it, one of whose imports was not
        found, or that have not been analysed yet: not the others, so typing
        in a draft nothing imports re-checks that draft alone.
        """
        path = uri_to_path(uri)
        found = []
        for other in documents:
            if other == uri:
                continue
            depends = self.depends.get(other)
            if depends is None or depends[1] or path in depends[0]:
                found.append(other)
        return found
