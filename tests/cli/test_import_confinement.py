"""Imports are confined to the project: nothing outside it is read, by ``check``, ``render`` or the editor.

The project is the folder holding the config (or the current folder without
one, or the editor's workspace folder); ``import_roots`` in the config adds
folders.  A draft outside every root may still import from its own folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scaling_core import Config, analyze_document
from scaling_core.document.analysis import ImportContext
from server.lsp.state import State
from server.workspace import Project, UsageError, find_project, make_loader
from tests.conftest import margin

SECRET = "```calc\nsecret = 4242 byte\n```\n\nsecret-marker-text\n"


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """tmp/project (with margin.toml and docs/), tmp/other/secret.md outside it."""
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "margin.toml").write_text("tolerance = 0.05\n", "utf-8")
    (project / "shared.md").write_text("```calc\nW = 4.5e10 byte/s\n```\n", "utf-8")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "secret.md").write_text(SECRET, "utf-8")
    return tmp_path


def _draft(target: str) -> str:
    return f'```calc\nimport "{target}"\nx = secret\n```\n\nIt is `secret = 4242 byte`.\n'


OUTSIDE = ["../../other/secret.md", "../other/secret.md", "{tmp}/other/secret.md", "/etc/passwd", "/proc/self/environ"]


@pytest.mark.parametrize("target", OUTSIDE)
def test_an_import_outside_the_project_is_an_error_and_nothing_is_read(layout: Path, target: str) -> None:
    project = layout / "project"
    (project / "docs" / "draft.md").write_text(_draft(target.format(tmp=layout)), "utf-8")
    report = json.loads(margin("check", "--format", "json", "docs/draft.md", cwd=project).stdout)
    found = {d["code"]: d["message"] for d in report["diagnostics"]}
    assert "N006" in found, found
    assert "outside" in found["N006"] or "no such file" in found["N006"]
    assert "N001" in found  # 'secret' was never defined
    rendered = margin("render", "docs/draft.md", cwd=project)
    assert "4242" not in rendered.stdout.replace("`secret = 4242 byte`", "") and "secret-marker" not in rendered.stdout


def test_inside_the_project_imports_work_from_any_folder(layout: Path) -> None:
    project = layout / "project"
    (project / "docs" / "draft.md").write_text('```calc\nimport "shared.md"\nt = 1.7e7 byte / W\n```\n', "utf-8")
    (project / "docs" / "up.md").write_text('```calc\nimport "../shared.md"\nt = 1.7e7 byte / W\n```\n', "utf-8")
    assert margin("check", "docs/draft.md", "docs/up.md", cwd=project).returncode == 0


def test_a_symlink_inside_the_project_to_a_file_outside_is_refused(layout: Path) -> None:
    project = layout / "project"
    (project / "link.md").symlink_to(layout / "other" / "secret.md")
    (project / "draft.md").write_text(_draft("link.md"), "utf-8")
    report = json.loads(margin("check", "--format", "json", "draft.md", cwd=project).stdout)
    assert "N006" in {d["code"] for d in report["diagnostics"]}


def test_import_roots_allow_more_folders(layout: Path) -> None:
    project = layout / "project"
    (project / "margin.toml").write_text('import_roots = ["../other"]\n', "utf-8")
    (project / "draft.md").write_text(_draft("../other/secret.md"), "utf-8")
    result = margin("check", "--format", "json", "draft.md", cwd=project)
    assert result.returncode == 0, result.stdout
    assert find_project(project).import_roots == ((layout / "other").resolve(),)


@pytest.mark.parametrize("value", ['"../other"', "[1]", '["/no/such/folder"]'])
def test_bad_import_roots_are_a_usage_error(layout: Path, value: str) -> None:
    project = layout / "project"
    (project / "margin.toml").write_text(f"import_roots = {value}\n", "utf-8")
    with pytest.raises(UsageError, match="import_roots"):
        find_project(project)


def test_a_draft_outside_the_project_may_import_from_its_own_folder(layout: Path) -> None:
    (layout / "other" / "draft.md").write_text(_draft("secret.md"), "utf-8")
    (layout / "other" / "escape.md").write_text(_draft("../project/shared.md"), "utf-8")
    loader = make_loader(Project((layout / "project").resolve(), Config(), None))
    assert loader(str(layout / "other" / "draft.md"), "secret.md") is not None
    assert loader(str(layout / "other" / "sub" / "x.md"), "../secret.md") is None


def test_the_editor_confines_imports_to_its_workspace_and_open_documents_too(layout: Path) -> None:
    state = State(lambda document, analysis: None)
    state.set_root(layout / "project")
    importer = str(layout / "project" / "docs" / "draft.md")
    assert state.loader(importer, "../shared.md") is not None
    for target in ("../../other/secret.md", "/etc/passwd", str(layout / "other" / "secret.md")):
        assert state.loader(importer, target) is None, target
    # An open document outside the workspace is not importable either (the overlay is confined too).
    from server.lsp.documents import Document

    outside = (layout / "other" / "open.md").resolve()
    state.documents[outside.as_uri()] = Document(outside.as_uri(), 1, SECRET)
    assert state.loader(importer, str(outside)) is None
    analysis = analyze_document(_draft(str(outside)), importer, Config(), context=ImportContext(state.loader))
    assert "N006" in {d.code for d in analysis.diagnostics}
    assert not any("4242" in (v.display or "") for v in analysis.values)


def test_no_root_confines_to_the_importing_files_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "near.md").write_text("```calc\nW = 1 s\n```\n", "utf-8")
    loader = make_loader(None)
    assert loader(str(tmp_path / "a" / "draft.md"), "near.md") is not None
    assert loader(str(tmp_path / "a" / "draft.md"), "../a/near.md") is not None
    assert loader(str(tmp_path / "a" / "draft.md"), os.fspath(tmp_path / "b" / "x.md")) is None
    assert loader(str(tmp_path / "a" / "draft.md"), "/etc/passwd") is None
