"""Which drafts a run checks: paths and globs named on the command line, folder walks
(``include``/``exclude``, ``.gitignore``, pruning), and the paths that could not be read.

A folder that cannot be listed is never skipped silently: :func:`discover`
records it (with the reason) in ``skipped`` when asked, and ``margin check``
warns about it.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from server.globs import glob_matches
from server.project import Project, UsageError

if TYPE_CHECKING:
    import pathspec

_GLOB_CHARACTERS = frozenset("*?[")
#: A gitignore level: the folder its patterns are relative to (ending in "/") and the patterns.
_Level = tuple[str, "pathspec.GitIgnoreSpec"]


@dataclass(frozen=True)
class Skipped:
    """A path that should have been checked but could not be read, and why."""

    path: Path
    reason: str


def _file_matches(patterns: tuple[str, ...], relatives: list[str]) -> bool:
    return any(glob_matches(p, r) for p in patterns for r in relatives)


def _folder_matches(patterns: tuple[str, ...], relatives: list[str]) -> bool:
    """A pattern that matches a folder (``node_modules``) or everything in it (``drafts/old/**``)."""
    return any(glob_matches(p, r) or glob_matches(p, r + "/") for p in patterns for r in relatives)


def _root_relative(path: Path, project: Project) -> str | None:
    """``path`` relative to the project root ("" for the root itself), or None outside it."""
    try:
        relative = path.resolve().relative_to(project.root).as_posix()
    except ValueError:
        return None
    return "" if relative == "." else relative


def _covered(relative: str, patterns: tuple[str, ...], *, is_dir: bool) -> bool:
    """Whether ``patterns`` cover a root-relative path: the path itself or a folder above it."""
    parts = relative.split("/") if relative else []
    if any(_folder_matches(patterns, ["/".join(parts[:depth])]) for depth in range(1, len(parts))):
        return True
    return bool(parts) and (_folder_matches if is_dir else _file_matches)(patterns, [relative])


def is_excluded(path: Path, project: Project) -> bool:
    """Whether the config's ``exclude`` covers ``path``, matched relative to the project root.

    A pattern covers a file it matches and everything inside a folder it
    matches (``node_modules``, ``drafts/old/**``).  ``path`` need not exist (a
    ``--stdin-filename``); a path outside the project root is never excluded.
    """
    relative = _root_relative(path, project)
    return relative is not None and _covered(relative, project.config.exclude, is_dir=path.is_dir())


def _excludes_for(folder: Path, project: Project) -> tuple[str, ...]:
    """Exclude patterns that apply inside ``folder``: one that covers the folder
    itself is dropped, since naming the folder asks for it to be checked."""
    relative = _root_relative(folder, project)
    if not relative:
        return project.config.exclude
    return tuple(
        p for p in project.config.exclude
        if not _covered(relative, (p,), is_dir=True) and not glob_matches(p, relative + "/x.md")
    )  # fmt: skip


def _expand_glob(pattern: str) -> list[Path]:
    """The paths a glob argument matches, as the shell would expand it (``**``: any folders)."""
    matches = sorted(Path(match) for match in glob.glob(pattern, recursive=True))
    if not matches:
        raise UsageError(f"no files match '{pattern}'")
    return matches


def _spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """Gitignore patterns; a line pathspec rejects (a lone ``!``) is skipped, as git skips it."""
    import pathspec  # only when a walk meets gitignore rules: keeps start-up light

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])


def _valid_pattern(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _gitignore(folder: str) -> list[_Level]:
    """The level of ``folder/.gitignore``, if there is one."""
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [(os.path.join(folder, ""), _spec(lines))]


def _repository_levels(repository: str) -> list[_Level]:
    """A repository's own rules: ``$GIT_DIR/info/exclude``, relative to its top folder."""
    git = os.path.join(repository, ".git")
    git_dir = git
    if os.path.isfile(git):  # a worktree or submodule: "gitdir: <path>"
        try:
            with open(git, encoding="utf-8") as handle:
                git_dir = os.path.join(repository, handle.read().partition("gitdir:")[2].strip())
            with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
                git_dir = os.path.join(git_dir, handle.read().strip())
        except OSError:
            pass
    try:
        with open(os.path.join(git_dir, "info", "exclude"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [(os.path.join(repository, ""), _spec(lines))]


def _ignored(path: str, is_dir: bool, levels: list[_Level]) -> bool:
    """Whether git ignores ``path`` (absolute): the innermost level with a matching pattern decides."""
    for base, spec in reversed(levels):
        result = spec.check_file(path[len(base) :] + ("/" if is_dir else ""))
        if result.include is not None:
            return bool(result.include)
    return False


def _outer_levels(folder: Path) -> list[_Level] | None:
    """The gitignore rules above a walked folder, up to its repository's top; None outside a repository.

    A folder that these rules ignore was named on purpose: only the rules found
    inside it apply then.
    """
    chain = [folder, *folder.parents]
    top = next((index for index, candidate in enumerate(chain) if os.path.lexists(candidate / ".git")), None)
    if top is None:
        return None
    levels = _repository_levels(str(chain[top]))
    for index in range(top, 0, -1):
        levels += _gitignore(str(chain[index]))
        if _ignored(str(chain[index - 1]), True, levels):
            return []
    return levels


def _walk(
    folder: Path, project: Project, skipped: list[Skipped], *, respect_gitignore: bool, force_exclude: bool
) -> list[Path]:
    """The drafts inside ``folder``: included, not excluded, not ignored, not hidden; pruned as it goes.

    A folder that cannot be listed, or an entry whose type cannot be read, goes to ``skipped``.
    """
    include = project.config.include
    excludes = project.config.exclude if force_exclude else _excludes_for(folder, project)
    prefix = _root_relative(folder, project)
    absolute = folder.resolve()
    outer = _outer_levels(absolute) if respect_gitignore else None
    found: list[Path] = []
    # (folder as shown, absolute folder, path relative to the walked folder ("" or "a/b/"), gitignore levels)
    stack: list[tuple[Path, str, str, list[_Level] | None]] = [(folder, str(absolute), "", outer)]
    while stack:
        shown, directory, relative, levels = stack.pop()
        if respect_gitignore:
            if relative and os.path.lexists(os.path.join(directory, ".git")):  # a nested repository
                levels = _repository_levels(directory)
            if levels is not None:
                levels = levels + _gitignore(directory)
        try:
            with os.scandir(directory) as entries:
                listed = list(entries)
        except OSError as error:
            skipped.append(Skipped(shown, f"cannot read the folder: {_reason(error)}"))
            continue
        for entry in listed:
            if entry.name.startswith("."):
                continue
            walk_relative = relative + entry.name
            relatives = [walk_relative, f"{prefix}/{walk_relative}"] if prefix else [walk_relative]
            try:
                is_dir = entry.is_dir() and not entry.is_symlink()  # symlinked folders are not followed
                is_file = not is_dir and entry.is_file()
            except OSError as error:
                skipped.append(Skipped(shown / entry.name, f"cannot tell what it is: {_reason(error)}"))
                continue
            if is_dir:
                if not _folder_matches(excludes, relatives) and not (levels and _ignored(entry.path, True, levels)):
                    stack.append((shown / entry.name, entry.path, walk_relative + "/", levels))
            elif is_file and _file_matches(include, relatives) and not _file_matches(excludes, relatives):
                if not (levels and _ignored(entry.path, False, levels)):
                    found.append(shown / entry.name)
    return sorted(found)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def discover(
    paths: list[Path],
    project: Project,
    *,
    respect_gitignore: bool = True,
    force_exclude: bool = False,
    skipped: list[Skipped] | None = None,
) -> list[Path]:
    """The drafts to check, in order, each once.

    * A file named on the command line is checked even when ``exclude`` or a
      ``.gitignore`` covers it, unless ``force_exclude`` (pre-commit passes files).
    * A folder is walked: files matching ``include`` and not ``exclude`` (matched
      relative to the folder and to the project root), skipping hidden files and
      folders and, with ``respect_gitignore``, what git ignores (``.gitignore``
      files from the repository's top down, ``.git/info/exclude``).  Excluded and
      ignored folders are not entered.  An exclude pattern that covers the named
      folder itself does not apply inside it, unless ``force_exclude``.
    * A path that does not exist but contains ``*``, ``?`` or ``[`` is a glob
      (``**``: any folders), expanded relative to the current folder; what it
      matches counts as named on the command line.  A glob matching nothing is a
      usage error, as is a missing path.
    * A folder that cannot be listed (or a named path whose type cannot be
      read) is not checked: it is appended to ``skipped`` with the reason.
    """
    skipped = [] if skipped is None else skipped
    named: list[Path] = []
    for path in paths:
        try:
            exists = path.is_file() or path.is_dir()
        except OSError as error:  # in a folder we may not enter
            skipped.append(Skipped(path, f"cannot read it: {_reason(error)}"))
            continue
        if exists:
            named.append(path)
        elif not os.path.lexists(path) and _GLOB_CHARACTERS & set(str(path)):
            named += _expand_glob(str(path))
        else:
            raise UsageError(f"{path}: no such file or folder")
    found: list[Path] = []
    for path in named:
        if force_exclude and is_excluded(path, project):
            continue
        if path.is_dir():
            found += _walk(path, project, skipped, respect_gitignore=respect_gitignore, force_exclude=force_exclude)
        elif path.is_file():  # a glob may match a socket or a broken link: not a draft
            found.append(path)
    seen: set[str] = set()
    unique = []
    for path in found:
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique
