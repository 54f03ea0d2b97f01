"""``margin render -o`` writes safely: never its own input by accident, never through a planted link,
never a half-written file, and never a draft it could not decode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import margin

DRAFT = "```calc\nt = 3600 s\n```\n\nIt takes {calc}`t -> h`.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "in.md").write_text(DRAFT, "utf-8")
    return tmp_path


@pytest.mark.parametrize("output", ["in.md", "./in.md", "link.md", "hard.md"])
def test_render_refuses_to_overwrite_its_input(folder: Path, output: str) -> None:
    (folder / "link.md").symlink_to(folder / "in.md")
    os.link(folder / "in.md", folder / "hard.md")
    result = margin("render", "in.md", "-o", output, cwd=folder)
    assert result.returncode == 2 and "--in-place" in result.stderr, result.stderr
    assert (folder / "in.md").read_text("utf-8") == DRAFT


def test_in_place_rewrites_the_input_keeping_its_mode(folder: Path) -> None:
    (folder / "in.md").chmod(0o640)
    assert margin("render", "--in-place", "in.md", cwd=folder).returncode == 0
    assert (folder / "in.md").read_text("utf-8").endswith("It takes 1 h.\n")
    assert stat.S_IMODE((folder / "in.md").stat().st_mode) == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["in.md"]  # no temporary file left


def test_render_keeps_the_targets_mode_and_gives_a_new_file_the_usual_one(folder: Path) -> None:
    (folder / "out.md").write_text("old", "utf-8")
    (folder / "out.md").chmod(0o604)
    assert margin("render", "in.md", "-o", "out.md", cwd=folder).returncode == 0
    assert stat.S_IMODE((folder / "out.md").stat().st_mode) == 0o604
    assert margin("render", "in.md", "-o", "new.md", cwd=folder).returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((folder / "new.md").stat().st_mode) == 0o666 & ~umask


def test_render_never_writes_through_a_link(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    victim = tmp_path_factory.mktemp("victim") / "victim.txt"
    victim.write_text("precious", "utf-8")
    (folder / ".out.md.margin-tmp").symlink_to(victim)  # the old predictable temporary name
    (folder / "out.md").symlink_to(victim)
    assert margin("render", "in.md", "-o", "out.md", cwd=folder).returncode == 0
    assert victim.read_text("utf-8") == "precious"
    assert not (folder / "out.md").is_symlink()
    assert (folder / "out.md").read_text("utf-8").endswith("It takes 1 h.\n")


def test_a_failed_write_leaves_nothing_behind(folder: Path) -> None:
    (folder / "out.md").mkdir()
    result = margin("render", "in.md", "-o", "out.md", cwd=folder)
    assert result.returncode == 2 and "out.md" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["in.md", "out.md"]
    assert list((folder / "out.md").iterdir()) == []


def test_missing_folders_are_created_or_the_reason_is_given(folder: Path) -> None:
    assert margin("render", "in.md", "-o", "a/b/out.md", cwd=folder).returncode == 0
    assert (folder / "a" / "b" / "out.md").read_text("utf-8").endswith("It takes 1 h.\n")
    (folder / "file").write_text("", "utf-8")
    result = margin("render", "in.md", "-o", "file/sub/out.md", cwd=folder)
    assert result.returncode == 2 and "cannot create the folder" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (DRAFT.encode("utf-16"), "UTF-16"),
        (DRAFT.encode("utf-32"), "UTF-32"),
        ("Café {calc}`1 + 1`\n".encode("latin-1"), "not valid UTF-8"),
    ],
    ids=["utf-16", "utf-32", "latin-1"],
)
def test_a_draft_that_is_not_utf8_is_an_error_naming_its_encoding(folder: Path, data: bytes, named: str) -> None:
    (folder / "odd.md").write_bytes(data)
    for args in (("render", "odd.md"), ("render", "odd.md", "-o", "out.md")):
        result = margin(*args, cwd=folder)
        assert result.returncode == 2 and named in result.stderr, result.stderr
        assert result.stdout == ""
    assert not (folder / "out.md").exists()
    assert (folder / "odd.md").read_bytes() == data


def test_bytes_render_does_not_change_round_trip(folder: Path) -> None:
    data = "\ufeff# Title\r\n\r\nNo inline values here, only CRLF and a BOM.\r\n".encode()
    (folder / "bom.md").write_bytes(data)
    assert margin("render", "bom.md", "-o", "out.md", cwd=folder).returncode == 0
    assert (folder / "out.md").read_bytes() == data
