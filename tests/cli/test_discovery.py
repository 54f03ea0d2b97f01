"""Draft discovery: globs, include/exclude, .gitignore, --force-exclude, pruning (real files, real git)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scaling_core import Config
from server.workspace import Project, UsageError, discover, is_excluded
from tests.conftest import margin

GOOD = "# Draft\n\n```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\nIt takes `1.7e7 / 9e10 = 188us`, about 189 µs<!-- ≈ t -->.\n"
BAD = "# Draft\n\n```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\nIt takes about **170 ms**<!-- ≈ t -->.\n"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def write(root: Path, *names: str, text: str = "# draft\n") -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)


def project(root: Path, *exclude: str) -> Project:
    return Project(root.resolve(), Config(exclude=exclude), None)


def names(found: list[Path], root: Path) -> list[str]:
    """Found paths relative to ``root``, in discovery order."""
    return [path.resolve().relative_to(root.resolve()).as_posix() for path in found]


# --- folder walks: include, exclude, hidden -----------------------------------------------------------------------


def test_walk_applies_include_exclude_and_skips_hidden(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "b.txt", ".hidden.md", ".cache/c.md", "sub/d.md", "drafts/old/e.md", "drafts/f.md")
    found = discover([tmp_path], project(tmp_path, "drafts/old/**"))
    assert names(found, tmp_path) == ["a.md", "drafts/f.md", "sub/d.md"]


def test_walk_order_is_by_path_parts(tmp_path: Path) -> None:
    write(tmp_path, "a/x.md", "a-b/x.md", "a.md", "b.md")
    assert names(discover([tmp_path], project(tmp_path)), tmp_path) == ["a/x.md", "a-b/x.md", "a.md", "b.md"]


def test_exclude_pattern_naming_a_folder_excludes_everything_in_it(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "node_modules/pkg/README.md", "site/node_modules/x.md", "vendor/y.md")
    found = discover([tmp_path], project(tmp_path, "**/node_modules", "vendor"))
    assert names(found, tmp_path) == ["a.md"]


def test_named_folder_is_checked_although_excluded_unless_force_exclude(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "mistakes/wrong.md")
    config = project(tmp_path, "mistakes/**")
    assert names(discover([tmp_path], config), tmp_path) == ["a.md"]
    assert names(discover([tmp_path / "mistakes"], config), tmp_path) == ["mistakes/wrong.md"]
    assert discover([tmp_path / "mistakes"], config, force_exclude=True) == []
    assert names(discover([tmp_path], config, force_exclude=True), tmp_path) == ["a.md"]


def test_explicit_files_are_checked_unless_force_exclude(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "drafts/old/b.md", "notes.txt")
    config = project(tmp_path, "drafts/old/**")
    explicit = [tmp_path / "drafts/old/b.md", tmp_path / "a.md", tmp_path / "notes.txt"]
    assert names(discover(explicit, config), tmp_path) == ["drafts/old/b.md", "a.md", "notes.txt"]
    assert names(discover(explicit, config, force_exclude=True), tmp_path) == ["a.md", "notes.txt"]


def test_force_exclude_matches_relative_to_the_project_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "book/drafts/b.md", "book/a.md")
    monkeypatch.chdir(tmp_path / "book")
    config = project(tmp_path / "book", "drafts/**")
    assert discover([Path("drafts/b.md"), Path("a.md")], config, force_exclude=True) == [Path("a.md")]


def test_each_file_is_listed_once(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "b.md")
    found = discover([tmp_path / "a.md", tmp_path, tmp_path / "a.md"], project(tmp_path))
    assert names(found, tmp_path) == ["a.md", "b.md"]


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="missing.md: no such file or folder"):
        discover([tmp_path / "missing.md"], project(tmp_path))


# --- is_excluded -----------------------------------------------------------------------------------------------------


def test_is_excluded(tmp_path: Path) -> None:
    write(tmp_path, "drafts/old/a.md", "node_modules/x/y.md", "keep.md")
    config = project(tmp_path, "drafts/old/**", "node_modules", "*.tmp.md")
    assert is_excluded(tmp_path / "drafts/old/a.md", config)
    assert is_excluded(tmp_path / "drafts/old", config)
    assert is_excluded(tmp_path / "node_modules/x/y.md", config)
    assert is_excluded(tmp_path / "scratch.tmp.md", config)  # need not exist (--stdin-filename)
    assert is_excluded(tmp_path / "drafts/old/new/never-written.md", config)
    assert not is_excluded(tmp_path / "keep.md", config)
    assert not is_excluded(tmp_path / "drafts", config)
    assert not is_excluded(tmp_path, config)
    assert not is_excluded(tmp_path.parent / "elsewhere" / "drafts/old/a.md", config)


# --- globs -----------------------------------------------------------------------------------------------------------


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path, "docs/a.md", "docs/b.md", "docs/n.txt", "docs/x/c.md", "docs/x/y/d.md", "docs/.hidden/e.md")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_glob_star(docs: Path) -> None:
    assert discover([Path("docs/*.md")], project(docs)) == [Path("docs/a.md"), Path("docs/b.md")]
    assert discover([Path("docs/[a].md")], project(docs)) == [Path("docs/a.md")]
    assert discover([Path("docs/?.md")], project(docs)) == [Path("docs/a.md"), Path("docs/b.md")]


def test_glob_double_star_matches_any_folders_but_not_hidden_ones(docs: Path) -> None:
    found = discover([Path("docs/**/*.md")], project(docs))
    assert found == [Path(p) for p in ("docs/a.md", "docs/b.md", "docs/x/c.md", "docs/x/y/d.md")]


def test_absolute_glob(docs: Path) -> None:
    assert discover([docs / "docs" / "x" / "**" / "*.md"], project(docs)) == [
        docs / "docs/x/c.md",
        docs / "docs/x/y/d.md",
    ]


def test_glob_matching_nothing_is_a_usage_error(docs: Path) -> None:
    with pytest.raises(UsageError, match=r"no files match 'docs/\*\*/\*\.rst'"):
        discover([Path("docs/**/*.rst")], project(docs))


def test_glob_matches_are_explicit(docs: Path) -> None:
    config = project(docs, "docs/x/**")
    assert discover([Path("docs/x/*.md")], config) == [Path("docs/x/c.md")]  # excluded, but named
    assert discover([Path("docs/x/*.md")], config, force_exclude=True) == []
    assert discover([Path("docs/?")], config) == [Path("docs/x/c.md"), Path("docs/x/y/d.md")]  # a folder: walked


def test_existing_path_with_glob_characters_is_taken_literally(docs: Path) -> None:
    write(docs, "docs/[draft].md")
    assert discover([Path("docs/[draft].md")], project(docs)) == [Path("docs/[draft].md")]


# --- .gitignore ------------------------------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_init(tmp_path)
    write(tmp_path, ".gitignore", text="build/\n*.draft.md\n/scratch.md\n")
    write(tmp_path, "docs/.gitignore", text="private/\n")
    write(tmp_path, "a.md", "scratch.md", "x.draft.md", "build/out.md", "docs/b.md", "docs/private/p.md")
    write(tmp_path, "docs/scratch.md", "docs/y.draft.md", "docs/private2/q.md")
    return tmp_path


def test_gitignore_at_several_levels(repo: Path) -> None:
    found = discover([repo], project(repo))
    assert names(found, repo) == ["a.md", "docs/b.md", "docs/private2/q.md", "docs/scratch.md"]


def test_parent_gitignore_applies_when_walking_a_subfolder(repo: Path) -> None:
    found = discover([repo / "docs"], project(repo))
    assert names(found, repo) == ["docs/b.md", "docs/private2/q.md", "docs/scratch.md"]


def test_no_respect_gitignore(repo: Path) -> None:
    found = discover([repo], project(repo), respect_gitignore=False)
    assert names(found, repo) == [
        "a.md", "build/out.md", "docs/b.md", "docs/private/p.md", "docs/private2/q.md", "docs/scratch.md",
        "docs/y.draft.md", "scratch.md", "x.draft.md",
    ]  # fmt: skip


def test_explicit_gitignored_file_is_checked(repo: Path) -> None:
    explicit = [repo / "x.draft.md", repo / "build/out.md"]
    assert names(discover(explicit, project(repo)), repo) == ["x.draft.md", "build/out.md"]
    assert names(discover(explicit, project(repo), force_exclude=True), repo) == ["x.draft.md", "build/out.md"]


def test_named_folder_that_git_ignores_is_walked(repo: Path) -> None:
    assert names(discover([repo / "build"], project(repo)), repo) == ["build/out.md"]


def test_negation(repo: Path) -> None:
    write(repo, ".gitignore", text="notes/*\n!notes/keep.md\n*.tmp.md\n")
    write(repo, "notes/keep.md", "notes/drop.md", "sub/a.tmp.md", "sub/wanted.tmp.md")
    write(repo, "sub/.gitignore", text="!wanted.tmp.md\n")
    found = names(discover([repo], project(repo)), repo)
    assert "notes/keep.md" in found and "sub/wanted.tmp.md" in found
    assert "notes/drop.md" not in found and "sub/a.tmp.md" not in found


def test_negation_cannot_reinclude_a_file_in_an_ignored_folder(repo: Path) -> None:
    write(repo, ".gitignore", text="notes/\n!notes/keep.md\n")
    write(repo, "notes/keep.md")
    assert "notes/keep.md" not in names(discover([repo], project(repo)), repo)


def test_git_info_exclude(repo: Path) -> None:
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/exclude").write_text("a.md\ndocs/b.md\n", "utf-8")
    assert names(discover([repo], project(repo)), repo) == ["docs/private2/q.md", "docs/scratch.md"]


def test_gitignore_outside_a_repository_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", text="*.md\n")
    write(tmp_path, "a.md")
    assert names(discover([tmp_path], project(tmp_path)), tmp_path) == ["a.md"]


@needs_git
def test_nested_repository_has_its_own_rules(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path, ".gitignore", text="*.gen.md\n")
    write(tmp_path, "vendored/.git/info/exclude", text="local.md\n")  # a nested repository's git folder
    write(tmp_path, "a.gen.md", "vendored/b.gen.md", "vendored/local.md", "vendored/c.md")
    found = names(discover([tmp_path], project(tmp_path)), tmp_path)
    assert found == ["vendored/b.gen.md", "vendored/c.md"]


def test_ignored_and_excluded_folders_are_never_entered(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open(repo / ".gitignore", "a", encoding="utf-8") as gitignore:
        gitignore.write("node_modules/\n")
    for index in range(50):
        write(repo, f"node_modules/pkg{index}/README.md", f"drafts/old/{index}/x.md", f".venv/lib/{index}/y.md")
    scanned: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path: str) -> object:
        scanned.append(Path(path).resolve().relative_to(repo.resolve()).as_posix())
        return real_scandir(path)

    monkeypatch.setattr("server.discovery.os.scandir", recording_scandir)
    found = names(discover([repo], project(repo, "drafts/old/**")), repo)
    assert found == ["a.md", "docs/b.md", "docs/private2/q.md", "docs/scratch.md"]
    assert sorted(scanned) == [".", "docs", "docs/private2", "drafts"]


def test_gitignore_line_that_pathspec_rejects_is_skipped(repo: Path) -> None:
    write(repo, ".gitignore", text="!\nbuild/\n")
    assert "build/out.md" not in names(discover([repo], project(repo)), repo)


# --- the command line ------------------------------------------------------------------------------------------------


@needs_git
def test_cli_respects_gitignore_and_no_respect_gitignore(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path, ".gitignore", text="bad.md\n")
    write(tmp_path, "good.md", text=GOOD)
    write(tmp_path, "bad.md", text=BAD)
    assert margin("check", ".", cwd=tmp_path).returncode == 0
    result = margin("check", "--no-respect-gitignore", ".", cwd=tmp_path)
    assert result.returncode == 1 and "bad.md:7:18: error C001" in result.stdout
    assert margin("check", "bad.md", cwd=tmp_path).returncode == 1  # named: checked although ignored


def test_cli_globs(tmp_path: Path) -> None:
    write(tmp_path, "drafts/ch1/good.md", text=GOOD)
    write(tmp_path, "drafts/ch2/bad.md", text=BAD)
    result = margin("check", "drafts/**/*.md", cwd=tmp_path)
    assert result.returncode == 1 and "drafts/ch2/bad.md:7:18" in result.stdout
    assert margin("check", "drafts/*/good.md", cwd=tmp_path).returncode == 0
    result = margin("check", "drafts/**/*.rst", cwd=tmp_path)
    assert result.returncode == 2 and "no files match 'drafts/**/*.rst'" in result.stderr


def test_cli_force_exclude(tmp_path: Path) -> None:
    write(tmp_path, "margin.toml", text='exclude = ["drafts/**"]\n')
    write(tmp_path, "good.md", text=GOOD)
    write(tmp_path, "drafts/bad.md", text=BAD)
    assert margin("check", "drafts/bad.md", "good.md", cwd=tmp_path).returncode == 1
    result = margin("check", "--force-exclude", "drafts/bad.md", "good.md", cwd=tmp_path)
    assert result.returncode == 0 and "bad.md" not in result.stdout
    assert margin("check", "--force-exclude", "drafts/bad.md", cwd=tmp_path).returncode == 0  # all excluded: fine


def test_cli_stdin_filename_with_force_exclude(tmp_path: Path) -> None:
    write(tmp_path, "margin.toml", text='exclude = ["drafts/**"]\n')
    result = margin("check", "-", "--stdin-filename", "drafts/bad.md", cwd=tmp_path, stdin=BAD)
    assert result.returncode == 1 and "drafts/bad.md:7:18: error C001" in result.stdout
    result = margin("check", "--force-exclude", "-", "--stdin-filename", "drafts/bad.md", cwd=tmp_path, stdin=BAD)
    assert result.returncode == 0 and "C001" not in result.stdout
