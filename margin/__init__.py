"""Margin's public Python API: check drafts from Python and get the JSON report's records.

>>> import margin
>>> report = margin.check_text("It takes `1.7e7 / 9e10 = 188us`.\\n", path="draft.md")
>>> report["summary"]["checks"]
{'pass': 1, 'fail': 0, 'warn': 0, 'skip': 0}

Both functions return the same dictionary that ``margin check --format json``
prints (schema version 1, docs/cli.md); docs/api.md has the details.  The
engine's own modules (``scaling_core``, ``server``) are not part of this API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from scaling_core import Config, __version__, analyze_document, config_from_mapping
from scaling_core.document.analysis import ImportContext
from scaling_core.hardware.records import chip_problems
from server.discovery import Skipped
from server.reports import report_records
from server.workspace import Project, UsageError, discover, display_path, find_project, make_loader, read_text

__all__ = ["MarginError", "__version__", "check_paths", "check_text"]

#: Raised for bad settings, missing paths or an empty selection (``margin check`` exits 2 for these).
MarginError = UsageError

ConfigLike = Config | Mapping[str, Any] | str | PathLike[str] | None


def _config_from(config: ConfigLike) -> tuple[Config, Path | None]:
    """A :class:`Config` from settings, a mapping like ``[tool.margin]``, or a config file."""
    if config is None:
        return Config(), None
    if isinstance(config, Config):
        return config, None
    if isinstance(config, Mapping):
        built, problems = config_from_mapping(dict(config))
        problems += chip_problems(built)
        if problems:
            raise MarginError("; ".join(problems))
        return built, None
    project = find_project(Path(config), Path(config))
    return project.config, project.root


def check_text(text: str, path: str = "<text>", config: ConfigLike = None) -> dict[str, Any]:
    """Check one draft given as text; the JSON report's records (``version``, ``diagnostics``, ``checks``, …).

    ``config`` is a mapping like the ``[tool.margin]`` table (``{"tolerance": "3%"}``),
    the path of a ``margin.toml``/``pyproject.toml``, or None for the defaults.
    Imports in the draft are resolved relative to ``path``'s folder when it exists.
    Never raises on the draft's content: mistakes are diagnostics.
    """
    settings, root = _config_from(config)
    folder = Path(path).parent
    base = root or (folder.resolve() if folder.is_dir() else Path.cwd())
    loader = make_loader(Project(base, settings, None))
    analysis = analyze_document(text, path, settings, context=ImportContext(loader))
    return report_records([analysis], [path])


def check_paths(paths: Iterable[str | PathLike[str]], config: ConfigLike = None) -> dict[str, Any]:
    """Check files and folders as ``margin check PATH…`` does; the JSON report's records.

    Folders are walked with the project's include/exclude and ``.gitignore``;
    without ``config``, settings come from the nearest ``margin.toml`` or
    ``[tool.margin]``, as on the command line.  Raises :data:`MarginError` for
    a missing path, bad settings, or no Markdown files.  A folder or file that
    cannot be read is listed under ``skipped_paths`` (path and reason), never
    dropped silently.
    """
    chosen = [Path(p) for p in paths] or [Path(".")]
    project = find_project(chosen[0] if chosen[0].exists() else Path.cwd(), None)
    if config is not None:
        settings, root = _config_from(config)
        project = Project(root or project.root, settings, None)
    skipped: list[Skipped] = []
    files = discover(chosen, project, skipped=skipped)
    if not files and not skipped:
        raise MarginError("no Markdown files to check")
    context = ImportContext(make_loader(project))
    analyses, shown = [], []
    for file in files:
        try:
            text = read_text(file)
        except OSError as error:
            skipped.append(Skipped(file, f"cannot read it: {error.strerror or error}"))
            continue
        shown.append(display_path(file))
        analyses.append(analyze_document(text, shown[-1], project.config, context=context))
    records = report_records(analyses, shown)
    # Never silent: what could not be read is listed (the command line warns and exits 1).
    records["skipped_paths"] = [{"path": display_path(s.path), "reason": s.reason} for s in skipped]
    return records
