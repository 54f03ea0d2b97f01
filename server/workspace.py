"""Files on disk: project config discovery, draft discovery (globs, .gitignore), import resolution.

All the I/O the engine needs is here, in the application layer.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scaling_core import Config, SourceLoader, config_from_mapping
from scaling_core.hardware.records import chip_problems

if TYPE_CHECKING:
    import pathspec


class UsageError(Exception):
    """A problem with the command line or the configuration (exit code 2)."""


@dataclass(frozen=True)
class Project:
    """The project root, its settings, and where they came from."""

    root: Path
    config: Config
    config_path: Path | None
    #: Folders besides ``root`` that imports may read (``import_roots``, resolved).
    import_roots: tuple[Path, ...] = ()


def find_project(start: Path, explicit: Path | None = None) -> Project:
    """Load ``margin.toml`` or ``[tool.margin]`` from ``start`` or a parent folder."""
    if explicit is not None:
        return _load(explicit)
    folder = start if start.is_dir() else start.parent
    for candidate in [folder.resolve(), *folder.resolve().parents]:
        margin_toml = candidate / "margin.toml"
        if margin_toml.is_file():
            return _load(margin_toml)
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and "tool" in (data := _read_toml(pyproject)) and "margin" in data["tool"]:
            return _load(pyproject)
    return Project(Path.cwd(), Config(), None)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read configuration: {error}") from None


def _load(path: Path) -> Project:
    data = _read_toml(path)
    table = data.get("tool", {}).get("margin", {}) if path.name == "pyproject.toml" else data
    table = dict(table) if isinstance(table, dict) else table
    roots, problems = _import_roots(table, path.parent.resolve()) if isinstance(table, dict) else ((), [])
    config, more = config_from_mapping(table)
    problems += more + chip_problems(config)
    if problems:
        raise UsageError("\n".join(f"{path}: {problem}" for problem in problems))
    return Project(path.parent.resolve(), config, path, roots)


def _import_roots(table: dict[str, Any], folder: Path) -> tuple[tuple[Path, ...], list[str]]:
    """``import_roots`` (taken out of ``table``): folders, relative to the config's, that imports may read."""
    value: object = next((table.pop(key) for key in ("import_roots", "import-roots") if key in table), [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return (), ["import_roots: must be a list of folder paths (relative to the config's folder)"]
    roots, problems = [], []
    for item in value:
        root = (folder / os.path.expanduser(item)).resolve()
        if root.is_dir():
            roots.append(root)
        else:
            problems.append(f"import_roots: '{item}' is not a folder")
    return tuple(roots), problems


# ---------------------------------------------------------------------------
# Draft discovery: globs, folder walks (include/exclude, .gitignore, pruning).

_GLOB_CHARACTERS = frozenset("*?[")
#: A gitignore level: the folder its patterns are relative to (ending in "/") and the patterns.
_Level = tuple[str, "pathspec.GitIgnoreSpec"]


@functools.lru_cache(maxsize=1024)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob with ``**`` (any number of folders) into a regex."""
    out = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z")


def _file_matches(patterns: tuple[str, ...], relatives: list[str]) -> bool:
    return any(glob_to_regex(p).match(r) for p in patterns for r in relatives)


def _folder_matches(patterns: tuple[str, ...], relatives: list[str]) -> bool:
    """A pattern that matches a folder (``node_modules``) or everything in it (``drafts/old/**``)."""
    return any(glob_to_regex(p).match(r) or glob_to_regex(p).match(r + "/") for p in patterns for r in relatives)


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
        if not _covered(relative, (p,), is_dir=True) and not glob_to_regex(p).match(relative + "/x.md")
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


def _walk(folder: Path, project: Project, *, respect_gitignore: bool, force_exclude: bool) -> list[Path]:
    """The drafts inside ``folder``: included, not excluded, not ignored, not hidden; pruned as it goes."""
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
        except OSError:
            continue
        for entry in listed:
            if entry.name.startswith("."):
                continue
            walk_relative = relative + entry.name
            relatives = [walk_relative, f"{prefix}/{walk_relative}"] if prefix else [walk_relative]
            try:
                is_dir = entry.is_dir() and not entry.is_symlink()  # symlinked folders are not followed
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir:
                if not _folder_matches(excludes, relatives) and not (levels and _ignored(entry.path, True, levels)):
                    stack.append((shown / entry.name, entry.path, walk_relative + "/", levels))
            elif is_file and _file_matches(include, relatives) and not _file_matches(excludes, relatives):
                if not (levels and _ignored(entry.path, False, levels)):
                    found.append(shown / entry.name)
    return sorted(found)


def discover(
    paths: list[Path], project: Project, *, respect_gitignore: bool = True, force_exclude: bool = False
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
    """
    named: list[Path] = []
    for path in paths:
        if path.is_file() or path.is_dir():
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
            found += _walk(path, project, respect_gitignore=respect_gitignore, force_exclude=force_exclude)
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


def read_text(path: Path) -> str:
    """A draft's text with its line endings preserved (CRLF stays CRLF)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read()


def display_path(path: Path) -> str:
    """A path as shown in reports: relative to the current folder when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


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
            if candidate.is_file():
                try:
                    return display(candidate), read_text(candidate)
                except OSError:  # unreadable: not found, like a missing file
                    return None
        return None

    return load


#: An importer named by a URI (``untitled:Untitled-1``), not a path: it has no folder of its own.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:(?![\\/])")


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a new temporary file and a rename.

    The temporary file is created in the target's folder with an unpredictable
    name and ``O_EXCL`` (a link planted there is never written through); it
    takes the target's mode (a new file gets the usual ``0o666`` less the
    umask) and is removed if anything fails.  The rename replaces the target's
    entry, so a link at the target is replaced, not followed.  The folder must
    exist (an ``OSError`` otherwise, as for any other failure).
    """
    import tempfile  # only when writing: tempfile imports random and shutil

    content = data.encode("utf-8") if isinstance(data, str) else data
    try:
        existing = os.lstat(path)
        mode = stat.S_IMODE(existing.st_mode) if stat.S_ISREG(existing.st_mode) else None
    except OSError:
        mode = None
    if mode is None:
        umask = os.umask(0o22)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".margin-tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
