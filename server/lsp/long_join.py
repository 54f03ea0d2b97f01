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
:func:`join_views` does the same for views ``(source, low, high)`` of longer
strings, copying each from where it lies: the next version of a draft is
mostly views of the last one's text, copied once and never sliced first.

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
from collections.abc import Sequence

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
#: A string's class: 0 ASCII, 1 Latin-1 (one byte a character either way), 2 and 4 its bytes a character.
#: What a view must hold to be of each class above 1 or 0, widest first.
_BEYOND = ((4, _ASTRAL), (2, re.compile("[^\x00-\xff]")), (1, re.compile("[^\x00-\x7f]")))
#: Characters a view is searched at a time for one of its class's characters (~3.5 ms each).
SCAN_WINDOW = 1 << 20
#: The largest character of each class: what ``PyUnicode_New`` is told, to lay the string out so.
_LARGEST = {0: 0x7F, 1: 0xFF, 2: 0xFFFF, 4: 0x10FFFF}


def join_pieces(pieces: list[str]) -> str:
    """``"".join(pieces)``; for a text of :data:`LONG_TEXT` characters or more, filled piece by piece with
    the lock released during each copy (see the module's docstring)."""
    return join_views([(piece, 0, len(piece)) for piece in pieces])


def join_views(views: Sequence[tuple[str, int, int]]) -> str:
    """The text of ``views``, each ``(source, low, high)`` standing for ``source[low:high]``, joined.

    A long text is copied from its sources as :func:`join_pieces` copies
    pieces, each view straight from where it lies in its source: the
    language server's next version of a draft is mostly views of the last
    one, so the draft is copied once, never sliced first.  The result is laid
    out at the narrowest width its characters need, as any string is: a view
    of a wide source is only as wide as what it holds (looked for, from its
    start, only where its width decides the result's).
    """
    length = sum(high - low for _source, low, high in views)
    if len(views) == 1 and views[0][1] == 0 and views[0][2] == len(views[0][0]):
        return views[0][0]
    if length < LONG_TEXT or _HEADERS is None:
        return "".join([source[low:high] for source, low, high in views])
    classes: dict[int, int] = {}
    for source, _low, _high in views:
        if id(source) not in classes:
            kind = _kind(source)
            if kind == 0:
                return "".join([source[low:high] for source, low, high in views])
            classes[id(source)] = 0 if source.isascii() else kind
    widest = max([classes[id(source)] for source, low, high in views if low == 0 and high == len(source)], default=0)
    for source, low, high in sorted(views, key=lambda view: -classes[id(view[0])]):
        for level, beyond in _BEYOND:
            if widest < level <= classes[id(source)] and _holds(beyond, source, low, high):
                widest = level
                break
    import ctypes  # only for long texts: ~3 ms to import

    kind = max(widest, 1)
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_ssize_t, ctypes.c_uint32)(("PyUnicode_New", ctypes.pythonapi))
    text: str = new(length, _LARGEST[widest])
    ascii_header, other_header, bytes_header = _HEADERS
    if sys.getsizeof(text) != (ascii_header if widest == 0 else other_header) + (length + 1) * kind:
        return "".join([source[low:high] for source, low, high in views])  # not the layout this module knows
    at = id(text) + (ascii_header if widest == 0 else other_header)
    for source, low, high in views:
        source_kind = max(classes[id(source)], 1)
        if source_kind != kind:  # narrower, or a wide source's view of narrow characters: read at its own width
            source, low, high = source[low:high], 0, high - low
            source_kind = _kind(source)
        if source_kind == kind:
            start = id(source) + (ascii_header if source.isascii() else other_header) + low * kind
            ctypes.memmove(at, start, (high - low) * kind)
        else:
            wide = source.encode(_WIDEN[kind], "surrogatepass")  # a lone surrogate is a character like any other
            ctypes.memmove(at, id(wide) + bytes_header, len(wide))
        at += (high - low) * kind
    return text


def _holds(pattern: re.Pattern[str], source: str, low: int, high: int) -> bool:
    """Whether ``source[low:high]`` holds a character ``pattern`` matches, looked for :data:`SCAN_WINDOW`
    characters at a time: a search holds the interpreter lock throughout (20 MB whose one wide character
    is last: ~70 ms), and the event loop gets it between windows."""
    return any(pattern.search(source, at, min(at + SCAN_WINDOW, high)) for at in range(low, high, SCAN_WINDOW))


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
