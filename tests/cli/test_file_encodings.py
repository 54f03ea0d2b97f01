"""Nothing is skipped silently: drafts in any Unicode encoding are checked, and a path that
cannot be read is a warning, counted, and fails the run (exit 2 when nothing could be read).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from server.cli import main
from server.files import decode_draft
from tests.cli.test_check_command import margin

#: One failing check in a calc block on the first line, one passing code span.
DRAFT = "```calc\nx = 2 * 3\nx == 7\n```\n\nIt is `2 * 3 = 6`.\n"
SUMMARY = "1 file: checks 1 passed, 1 failed"
FIXABLE = "# Fix\n\n```calc\nx = 2 * 3\n```\n\nIt is 7<!-- = x -->.\n"

ENCODINGS: dict[str, Callable[[str], bytes]] = {
    "utf-8 with a byte order mark": lambda t: t.encode("utf-8-sig"),
    "utf-16 le with a byte order mark": lambda t: b"\xff\xfe" + t.encode("utf-16-le"),
    "utf-16 be with a byte order mark": lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
    "utf-16 le without": lambda t: t.encode("utf-16-le"),
    "utf-16 be without": lambda t: t.encode("utf-16-be"),
    "utf-32 le with a byte order mark": lambda t: b"\xff\xfe\x00\x00" + t.encode("utf-32-le"),
    "utf-32 be with a byte order mark": lambda t: b"\x00\x00\xfe\xff" + t.encode("utf-32-be"),
    "utf-32 le without": lambda t: t.encode("utf-32-le"),
    "utf-32 be without": lambda t: t.encode("utf-32-be"),
}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_draft_in_any_unicode_encoding_is_checked(tmp_path: Path, encoding: str) -> None:
    (tmp_path / "draft.md").write_bytes(ENCODINGS[encoding](DRAFT))
    result = margin("check", "draft.md", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert SUMMARY in result.stdout
    assert "draft.md:3:1: error C001" in result.stdout  # the calc fence on the first line is a fence


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_decoding_round_trips_the_bytes(encoding: str) -> None:
    data = ENCODINGS[encoding](DRAFT.replace("\n", "\r\n") + "µs ≈ 𝜋\n")
    read = decode_draft(data)
    assert read.text.startswith("```calc\r\n") and read.text.endswith("µs ≈ 𝜋\n") and read.warning is None
    assert read.encode(read.text) == data


def test_a_draft_from_stdin_with_a_byte_order_mark_is_checked(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    for data in (DRAFT.encode("utf-8-sig"), DRAFT.encode("utf-16")):
        result = subprocess.run(
            [sys.executable, "-m", "server", "check", "-"], cwd=tmp_path, input=data, capture_output=True,
            timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        assert SUMMARY in result.stdout.decode(), result.stderr


def test_fix_writes_a_utf16_draft_back_in_utf16(tmp_path: Path) -> None:
    draft = tmp_path / "draft.md"
    draft.write_bytes(FIXABLE.encode("utf-16"))
    result = margin("check", "--fix", "draft.md", cwd=tmp_path)
    assert "Fixed 1 problem in 1 file" in result.stderr, result.stderr
    assert draft.read_bytes() == FIXABLE.replace("It is 7", "It is 6").encode("utf-16")


def test_a_draft_that_is_not_utf8_is_checked_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "draft.md").write_bytes(DRAFT.encode() + "Café au lait.\n".encode("latin-1"))
    result = margin("check", "draft.md", cwd=tmp_path)
    assert SUMMARY in result.stdout
    assert "warning: draft.md: not valid UTF-8 (invalid continuation byte at byte" in result.stderr
    assert result.returncode == 1  # the failing check, not the warning


def test_a_broken_utf16_draft_is_skipped_with_a_warning_and_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("It is `2 * 3 = 6`.\n", "utf-8")
    (tmp_path / "broken.md").write_bytes(b"\xff\xfe" + "It is".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    result = margin("check", ".", cwd=tmp_path)
    assert "1 file: checks 1 passed" in result.stdout
    assert "warning: broken.md: skipped, cannot read it: not valid UTF-16 (little-endian)" in result.stderr
    assert "margin: 1 path skipped, not checked" in result.stderr
    assert result.returncode == 1
    assert margin("check", "--exit-zero", ".", cwd=tmp_path).returncode == 0
    assert margin("check", "broken.md", cwd=tmp_path).returncode == 2  # nothing could be read


# --- paths that cannot be read ------------------------------------------------------------------------------------


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        code = main(["check", "--color", "never", *args])
    finally:
        os.chdir(old)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_an_unreadable_folder_is_a_counted_warning_and_fails_the_run(
    tmp_path: Path, unreadable: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.md").write_text("It is `2 * 3 = 6`.\n", "utf-8")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "hidden.md").write_text("It is `2 * 3 = 7`.\n", "utf-8")
    unreadable(tmp_path / "secret")
    code, out, err = _check(tmp_path, capsys, ".")
    assert "1 file: checks 1 passed" in out
    assert "margin: warning: secret: skipped, cannot read the folder: Permission denied" in err
    assert "margin: 1 path skipped, not checked" in err
    assert code == 1


def test_an_unreadable_file_does_not_stop_the_run(
    tmp_path: Path, unreadable: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.md").write_text("It is `2 * 3 = 6`.\n", "utf-8")
    (tmp_path / "b.md").write_text("It is `2 * 3 = 7`.\n", "utf-8")
    (tmp_path / "c.md").write_text("It is `2 * 4 = 8`.\n", "utf-8")
    unreadable(tmp_path / "b.md")
    code, out, err = _check(tmp_path, capsys, ".")
    assert "2 files: checks 2 passed, 0 failed" in out
    assert "margin: warning: b.md: skipped, cannot read it: Permission denied" in err
    assert code == 1
    code, out, err = _check(tmp_path, capsys, "b.md")
    assert code == 2 and "nothing could be read: 1 path skipped" in err
