"""The project: where its configuration is (``margin.toml`` or ``[tool.margin]``) and what it says.

A configuration file is trusted like a build script, but it is still input:
a file that is not TOML, a ``tool`` or ``margin`` that is not a table, a
value of the wrong type or a chip with an impossible field is a
:class:`UsageError` naming the file and the key (``margin check`` exits 2),
never a traceback.  The language server loads the same file leniently
(:func:`load_project`): it keeps the good settings and shows the problems.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    #: Folders besides ``root`` that imports may read (``import_roots``, resolved).
    import_roots: tuple[Path, ...] = ()


def find_project(start: Path, explicit: Path | None = None) -> Project:
    """Load ``margin.toml`` or ``[tool.margin]`` from ``start`` or a parent folder; a problem is a UsageError."""
    project, problems = load_project(start, explicit)
    if problems:
        raise UsageError("\n".join(problems))
    return project


def load_project(start: Path, explicit: Path | None = None) -> tuple[Project, list[str]]:
    """:func:`find_project`, but lenient: the project with every good setting, and the problems (each naming the file).

    A file that cannot be read or parsed gives the default settings; a bad
    key is left out; chips are kept (a bad chip field is not known to drafts:
    information T003 where it is used) and reported.
    """
    try:
        path = explicit if explicit is not None else _config_file(start)
    except UsageError as error:  # a pyproject.toml on the way up that is not TOML
        return Project(Path.cwd(), Config(), None), [str(error)]
    if path is None:
        return Project(Path.cwd(), Config(), None), []
    root = path.parent.resolve()
    try:
        data = _read_toml(path)
    except UsageError as error:
        return Project(root, Config(), path), [str(error)]
    table, problems = _margin_table(data, path)
    roots, found = _import_roots(table, root)
    config, more = config_from_mapping(table)
    problems += found + more + chip_problems(config)
    return Project(root, config, path, roots), [f"{path}: {problem}" for problem in problems]


def _config_file(start: Path) -> Path | None:
    """The nearest ``margin.toml``, or ``pyproject.toml`` with a ``[tool.margin]`` table, from ``start`` up."""
    folder = start if start.is_dir() else start.parent
    for candidate in [folder.resolve(), *folder.resolve().parents]:
        margin_toml = candidate / "margin.toml"
        if margin_toml.is_file():
            return margin_toml
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            tool = _read_toml(pyproject).get("tool")
            if not isinstance(tool, dict) and tool is not None or isinstance(tool, dict) and "margin" in tool:
                return pyproject  # a ``tool`` that is not a table is malformed: said so, not passed over
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a table; unreadable, not UTF-8, not TOML or nested too deeply is a UsageError."""
    import tomllib  # only for a project that has a configuration file: ~1.5 ms of a start

    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read configuration: {error}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise UsageError(f"{path}: cannot read configuration: nested too deeply") from None


def _margin_table(data: dict[str, Any], path: Path) -> tuple[dict[str, Any], list[str]]:
    """The settings table: the whole ``margin.toml``, or ``[tool.margin]`` of ``pyproject.toml`` (a copy)."""
    if path.name != "pyproject.toml":
        return dict(data), []
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        return {}, ["'tool' must be a table ([tool.margin] holds Margin's settings)"]
    table = tool.get("margin", {})
    if not isinstance(table, dict):
        return {}, ["'tool.margin' must be a table of settings ([tool.margin])"]
    return dict(table), []


def _import_roots(table: dict[str, Any], folder: Path) -> tuple[tuple[Path, ...], list[str]]:
    """``import_roots`` (taken out of ``table``): folders, relative to the config's, that imports may read."""
    value: object = next((table.pop(key) for key in ("import_roots", "import-roots") if key in table), [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return (), ["import_roots: must be a list of folder paths (relative to the config's folder)"]
    roots, problems = [], []
    for item in value:
        try:
            root = (folder / os.path.expanduser(item)).resolve()
        except (OSError, RuntimeError, ValueError):  # a link loop, a NUL in the name
            root = None
        if root is not None and root.is_dir():
            roots.append(root)
        else:
            problems.append(f"import_roots: '{item}' is not a folder")
    return tuple(roots), problems
