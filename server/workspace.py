"""Files on disk: project config discovery, draft discovery, import resolution.

All the I/O the engine needs is here, in the application layer.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from scaling_core import Config, config_from_mapping
from scaling_core.hardware.records import chip_problems


class UsageError(Exception):
    """A problem with the command line or the configuration (exit code 2)."""


@dataclass(frozen=True)
class Project:
    """The project root, its settings, and where they came from."""

    root: Path
    config: Config
    config_path: Path | None


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


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read configuration: {error}") from None


def _load(path: Path) -> Project:
    data = _read_toml(path)
    table = data.get("tool", {}).get("margin", {}) if path.name == "pyproject.toml" else data
    config, problems = config_from_mapping(table)
    problems += chip_problems(config)
    if problems:
        raise UsageError("\n".join(f"{path}: {problem}" for problem in problems))
    return Project(path.parent.resolve(), config, path)


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


def _matches(path: Path, patterns: tuple[str, ...], bases: list[Path]) -> bool:
    for base in bases:
        try:
            relative = path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
        if any(glob_to_regex(p).match(relative) for p in patterns):
            return True
    return False


def _excludes_for(folder: Path, project: Project) -> tuple[str, ...]:
    """Exclude patterns that apply inside ``folder``: one that covers the folder
    itself is dropped, since naming the folder asks for it to be checked."""
    try:
        inside = (folder.resolve().relative_to(project.root) / "x.md").as_posix()
    except ValueError:
        return project.config.exclude
    return tuple(p for p in project.config.exclude if not glob_to_regex(p).match(inside))


def discover(paths: list[Path], project: Project) -> list[Path]:
    """The drafts to check: explicit files always, folders filtered by include/exclude.

    A folder named on the command line is checked even when an exclude
    pattern covers it (``margin check examples/mistakes/``).
    """
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if any(part.startswith(".") for part in candidate.relative_to(path).parts):
                    continue
                if not candidate.is_file():
                    continue
                bases = [path, project.root]
                excludes = _excludes_for(path, project)
                if _matches(candidate, project.config.include, bases) and not _matches(candidate, excludes, bases):
                    found.append(candidate)
        else:
            raise UsageError(f"{path}: no such file or folder")
    return found


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


def make_loader(project: Project):
    """The import resolver: workspace-relative first, then relative to the importer."""

    def load(importer: str, target: str) -> tuple[str, str] | None:
        for base in (project.root, Path(importer).parent):
            candidate = (base / target).resolve()
            if candidate.is_file():
                return display_path(candidate), read_text(candidate)
        return None

    return load


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    temporary = path.with_name(f".{path.name}.margin-tmp")
    with open(temporary, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    os.replace(temporary, path)
