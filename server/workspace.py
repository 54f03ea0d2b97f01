"""Files on disk, seen from a project: import resolution (:func:`make_loader`), and the one
place the application layer imports the file modules from.

* :mod:`server.project`: the configuration file and the project root;
* :mod:`server.discovery`: which drafts a run checks (globs, folder walks, ``.gitignore``);
* :mod:`server.globs`: glob patterns matched in linear time;
* :mod:`server.files`: reading drafts in their encoding, writing files atomically.

All the I/O the engine needs is in these modules, in the application layer.
"""

from __future__ import annotations

import os
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
    # Paths are resolved as strings (``os.path.realpath``, what ``Path.resolve`` calls): a draft at the end of a
    # chain of 200 imports checks every link again on each keystroke, and pathlib's parsing was ~40% of a lookup.
    allowed = [os.path.realpath(p) for p in ([] if base_folder is None else [base_folder])]
    allowed += [os.path.realpath(p) for p in (root.import_roots if isinstance(root, Project) else ())]
    allowed += [os.path.realpath(p) for p in roots]
    bases = () if base_folder is None else (str(base_folder),)

    def load(importer: str, target: str) -> tuple[str, str] | None:
        folder = str(Path(importer).parent)
        inside = allowed
        if not _URI.match(importer):
            real_folder = os.path.realpath(folder)
            if not any(_within(real_folder, r) for r in allowed):
                inside = [*allowed, real_folder]  # a draft outside every root: its own folder
        for base in (*bases, folder):
            try:
                candidate = os.path.realpath(os.path.join(base, target))
            except (OSError, ValueError):  # a NUL in the name
                continue
            if not any(_within(candidate, r) for r in inside):
                continue
            if overlay is not None and (text := overlay.get(candidate)) is not None:
                return display(Path(candidate)), text
            try:
                if os.path.isfile(candidate):  # false for a link loop, as for a missing file
                    return display(Path(candidate)), read_text(Path(candidate))
            except OSError:  # unreadable: not found, like a missing file
                return None
        return None

    return load


#: An importer named by a URI (``untitled:Untitled-1``), not a path: it has no folder of its own.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:(?![\\/])")


def _within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies under it (both resolved; compared as the system compares names)."""
    path, root = os.path.normcase(path), os.path.normcase(root)
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)
