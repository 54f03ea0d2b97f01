"""Joining a long text's pieces while letting other threads run between them (CPython).

``"".join`` of a 20 MB draft's pieces is one C call that holds the interpreter
lock throughout: 26-30 ms on a 2-core machine, most of it the kernel handing
out the 40 MB string's fresh pages.  The language server joins each version
in its analysis thread, so the event loop waited that long on every keystroke
(the budget for a loop turn: 20 ms).  :func:`join_pieces` makes the string
empty at its final size and kind (``PyUnicode_New``, the C API's constructor
for a string to be filled) and copies each piece into it with
``ctypes.memmove``, which releases the lock for each copy; the page faults
happen there, and the event loop gets the lock between pieces.

This relies on CPython's compact string layout (the characters follow the
object's header; their width is the string's kind: 1, 2 or 4 bytes) and on
the string being seen by nothing else until it is full.  Where the layout is
not the one measured when this module loads (another interpreter; a string
that is not compact), it falls back to ``"".join``.  ``tests/lsp/test_long_join.py``
checks the result against ``"".join`` for every mix of kinds.
"""

from __future__ import annotations

import re
import sys

#: Texts shorter than this are joined with ``"".join`` (a 1 MB join holds the lock ~1 ms).
LONG_TEXT = 1_000_000


def _header_sizes() -> tuple[int, int, int] | None:
    """Bytes before the characters of a compact ASCII and other compact strings, and before a bytes object's."""
    if sys.implementation.name != "cpython":
        return None
    # Fresh strings of two characters: a one-character one may be a static string with its UTF-8 form kept.
    ascii_header = sys.getsizeof("a" * 2) - 3  # two characters and the terminating NUL, one byte each
    other = {sys.getsizeof(chr(code) * 2) - 3 * kind for code, kind in ((0xE9, 1), (0x101, 2), (0x1D465, 4))}
    if len(other) != 1:
        return None
    return ascii_header, other.pop(), sys.getsizeof(b"") - 1


_HEADERS = _header_sizes()
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_WIDEN = {2: "utf-16-le", 4: "utf-32-le"}  # a narrower piece's characters at the string's width


def join_pieces(pieces: list[str]) -> str:
    """``"".join(pieces)``; for a text of :data:`LONG_TEXT` characters or more, filled piece by piece with
    the lock released during each copy (see the module's docstring)."""
    length = sum(map(len, pieces))
    if length < LONG_TEXT or _HEADERS is None:
        return "".join(pieces)
    kinds = [_kind(piece) for piece in pieces]
    if 0 in kinds:
        return "".join(pieces)
    import ctypes  # only for long texts: ~3 ms to import

    kind = max(kinds)
    all_ascii = all(piece.isascii() for piece in pieces)
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_ssize_t, ctypes.c_uint32)(("PyUnicode_New", ctypes.pythonapi))
    text: str = new(length, 0x7F if all_ascii else {1: 0xFF, 2: 0xFFFF, 4: 0x10FFFF}[kind])
    ascii_header, other_header, bytes_header = _HEADERS
    if sys.getsizeof(text) != (ascii_header if all_ascii else other_header) + (length + 1) * kind:
        return "".join(pieces)  # not the layout this module knows
    at = id(text) + (ascii_header if all_ascii else other_header)
    for piece, piece_kind in zip(pieces, kinds):
        if piece_kind == kind:
            source = id(piece) + (ascii_header if piece.isascii() else other_header)
            ctypes.memmove(at, source, len(piece) * kind)
        else:
            wide = piece.encode(_WIDEN[kind], "surrogatepass")  # a lone surrogate is a character like any other
            ctypes.memmove(at, id(wide) + bytes_header, len(wide))
        at += len(piece) * kind
    return text


def within_bmp(text: str) -> bool:
    """Whether every character of ``text`` is below U+10000 (one UTF-16 unit each), told at once by CPython's
    string layout: a string of one or two bytes per character holds none beyond.  False when it cannot tell
    (another interpreter, a string not laid out as measured, or four bytes per character)."""
    return _HEADERS is not None and _kind(text) in (1, 2)


def _kind(piece: str) -> int:
    """Bytes per character of a compact string (1, 2 or 4), or 0 when ``piece`` is not one.

    A string may keep its UTF-8 form beside it, counted in its size: the sizes
    of the three widths then still tell them apart, except a two-byte string
    whose UTF-8 form is one byte longer than twice its length, which has the
    size of a four-byte one; a four-byte width is believed only with a
    character beyond U+FFFF in the string.
    """
    assert _HEADERS is not None
    if piece.isascii():  # an ASCII string's UTF-8 form is its characters: nothing beside them
        return 1 if sys.getsizeof(piece) == _HEADERS[0] + len(piece) + 1 else 0
    kind, rest = divmod(sys.getsizeof(piece) - _HEADERS[1], len(piece) + 1)
    if rest or kind not in (1, 2, 4) or (kind == 4 and _ASTRAL.search(piece) is None):
        return 0
    return kind
