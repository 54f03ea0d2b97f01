"""Drafts as files: reading them in whatever Unicode encoding they are in, showing their
paths, and writing files atomically.

Drafts are UTF-8 as a rule.  A byte order mark says otherwise (UTF-16 or
UTF-32, either byte order) or marks UTF-8; without one, a file whose every
other (or every fourth) byte is zero is UTF-16 (UTF-32) too.  The mark is not
part of the text, as in an editor, so a calc fence on the first line is a
fence.  Bytes that are not valid in the encoding found are either read with
replacement characters and a warning (UTF-8), or make the draft unreadable
(a UTF-16 or UTF-32 file that is not valid: guessing further would check a
text nobody wrote).
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

#: Byte order marks, longest first (the UTF-32 LE mark begins with the UTF-16 LE one).
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32 (big-endian)"),
    (b"\xef\xbb\xbf", "utf-8", "UTF-8"),
    (b"\xff\xfe", "utf-16-le", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "utf-16-be", "UTF-16 (big-endian)"),
)


class DraftDecodeError(ValueError):
    """A draft's bytes are not text in the encoding they claim (a UTF-16 or UTF-32 file that is not valid)."""


@dataclass(frozen=True)
class DraftText:
    """A draft as read: its text (without a byte order mark) and how to write it back byte for byte."""

    text: str
    #: The codec (``utf-8``, ``utf-16-le``, …) and the byte order mark the file began with (``b""``: none).
    codec: str = "utf-8"
    bom: bytes = b""
    #: The encoding in words when it is not plain UTF-8 ("UTF-16 (little-endian), with a byte order mark").
    encoding: str | None = None
    #: A warning about the reading: bytes that are not UTF-8 were replaced (U+FFFD).
    warning: str | None = None

    def encode(self, text: str) -> bytes:
        """``text`` in this draft's encoding, byte order mark included."""
        return self.bom + text.encode(self.codec)


def decode_draft(data: bytes, *, strict: bool = True) -> DraftText:
    """Decode a draft's bytes (see the module's docstring); line endings are kept as they are.

    A UTF-16 or UTF-32 file that is not valid raises :class:`DraftDecodeError`,
    or with ``strict=False`` is read as UTF-8 with replacement characters.
    """
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            return _decode(data[len(bom) :], codec, bom, f"{name}, with a byte order mark", strict)
    guessed = _wide(data)
    if guessed is not None:
        with contextlib.suppress(UnicodeDecodeError):  # not valid after all: read as UTF-8 (with a warning)
            return DraftText(data.decode(guessed[0]), guessed[0], b"", f"{guessed[1]}, without a byte order mark")
    return _decode(data, "utf-8", b"", None, strict)


def _decode(data: bytes, codec: str, bom: bytes, encoding: str | None, strict: bool) -> DraftText:
    try:
        return DraftText(data.decode(codec), codec, bom, encoding)
    except UnicodeDecodeError as error:
        where = f"{error.reason} at byte {error.start + len(bom)}"
        if codec == "utf-8":
            warning = f"not valid UTF-8 ({where}): read with replacement characters"
            return DraftText(data.decode(codec, errors="replace"), codec, bom, encoding, warning)
        if strict:
            raise DraftDecodeError(f"not valid {encoding} ({where})") from None
        return _decode(bom + data, "utf-8", b"", None, strict)


def _wide(data: bytes) -> tuple[str, str] | None:
    """UTF-16 or UTF-32 without a byte order mark, told by where the zero bytes are; None for neither."""
    if b"\x00" not in data:
        return None
    size = len(data)
    if size % 4 == 0:
        units = size // 4
        # Code points end at U+10FFFF: the top byte of every UTF-32 unit is zero and the next at most 0x10.
        if data[3::4].count(0) == units and max(data[2::4]) <= 0x10:
            return "utf-32-le", "UTF-32 (little-endian)"
        if data[0::4].count(0) == units and max(data[1::4]) <= 0x10:
            return "utf-32-be", "UTF-32 (big-endian)"
    if size % 2 == 0:
        units = size // 2
        high_le, high_be = data[1::2].count(0), data[0::2].count(0)
        # Mostly ASCII text: half or more of the units have a zero high byte, almost none a zero low byte.
        if high_le * 2 >= units and high_be * 10 < units:
            return "utf-16-le", "UTF-16 (little-endian)"
        if high_be * 2 >= units and high_le * 10 < units:
            return "utf-16-be", "UTF-16 (big-endian)"
    return None


def read_draft(path: Path) -> DraftText:
    """A draft file, decoded (raises ``OSError``, or :class:`DraftDecodeError` for a broken UTF-16/32 file)."""
    with open(path, "rb") as handle:
        return decode_draft(handle.read())


def read_text(path: Path) -> str:
    """A draft's text with its line endings preserved (CRLF stays CRLF), in any encoding :func:`read_draft`
    reads; never raises on the content (a broken UTF-16 file is read as UTF-8 with replacement characters)."""
    with open(path, "rb") as handle:
        return decode_draft(handle.read(), strict=False).text


def display_path(path: Path) -> str:
    """A path as shown in reports: relative to the current folder when inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


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
