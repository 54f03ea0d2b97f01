"""Files on disk, seen from a project: import resolution (:func:`make_loader`), and the one
place the application layer imports the file modules from.

* :mod:`server.project`: the configuration file and the project root;
* :mod:`server.discovery`: which drafts a run checks (globs, folder walks, ``.gitignore``);
* :mod:`server.globs`: glob patterns matched in linear time;
* :mod:`server.files`: reading drafts in their encoding, writing files atomically.

All the I/O the engine needs is in these modules, in the application layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from scaling_core import SourceLoader
from server.discovery import Skipped, discover, is_excluded
from server.files import (
    DraftDecodeError,
    DraftText,
    decode_draft,
    display_path,
    read_draft,
    read_text,
    write_atomically,
)
from server.project import Project, UsageError, find_project, load_project

__all__ = [
    "DraftDecodeError", "DraftText", "Project", "Skipped", "UsageError", "decode_draft", "discover", "display_path",
    "find_project", "is_excluded", "load_project", "make_loader", "read_draft", "read_text", "write_atomically",
]  # fmt: skip


def make_loader(
    root: Project | Path | None,
    overlay: Mapping[str, str] | None = None,
    *,
    display: Callable[[Path], str] = display_path,
    roots: Sequence[Path] = (),
) -> SourceLoader:
    """The one import resolver, for ``margin check`` and the language server alike.

    ``import "target"`` is looked up relative to ``root`` (a project, or the
    editor's workspace folder; None: skipped) first, then relative to the
    importing file.  At each place, ``overlay`` (absolute path -> text: the
    editor's open documents, read when called, so it may change) is asked
    before the disk, so an import sees unsaved edits.  The path returned names
    the imported file in diagnostics and locations: ``display(path)``,
    relative to the current folder by default.

    Only files inside the allowed roots are read (docs/security.md): ``root``,
    a project's ``import_roots``, ``roots``, and the importing file's own
    folder when that file lies outside all of them.  Links are followed before
    the check, so a link to a file outside is refused.  A refused import is
    not found (N006), and nothing of it is read.
    """
    base_folder = root.root if isinstance(root, Project) else root
    allowed = [p.resolve() for p in ([] if base_folder is None else [base_folder])]
    allowed += [p.resolve() for p in (root.import_roots if isinstance(root, Project) else ())]
    allowed += [p.resolve() for p in roots]

    def load(importer: str, target: str) -> tuple[str, str] | None:
        folder = Path(importer).parent
        inside = allowed
        if not _URI.match(importer) and not any(_within(folder.resolve(), r) for r in allowed):
            inside = [*allowed, folder.resolve()]  # a draft outside every root: its own folder
        bases = (folder,) if base_folder is None else (base_folder, folder)
        for base in bases:
            try:
                candidate = (base / target).resolve()
            except (OSError, RuntimeError, ValueError):  # a link loop, a NUL in the name
                continue
            if not any(_within(candidate, r) for r in inside):
                continue
            if overlay is not None and (text := overlay.get(str(candidate))) is not None:
                return display(candidate), text
            try:
                if candidate.is_file():
                    return display(candidate), read_text(candidate)
            except OSError:  # unreadable: not found, like a missing file
                return None
        return None

    return load


#: An importer named by a URI (``untitled:Untitled-1``), not a path: it has no folder of its own.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:(?![\\/])")


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
