"""Decoding a long message (a 20 MB draft opened) off the event loop, a slice at a time.

``json.loads`` of a ``didOpen`` carrying a 20 MB draft is one C call of
60-150 ms on a 2-core machine that holds the interpreter lock throughout: the
event loop could not run meanwhile, wherever the call was made.  For a body of
:data:`LONG_BODY_BYTES` or more the transport calls :func:`decode_long_body`
in a thread, and it does the same work in slices of about :data:`SLICE` bytes
or characters, so that the lock can pass to the event loop between them:

* the UTF-8 bytes are decoded by an incremental decoder, a slice at a time;
* the JSON object is read by the standard library's own Python scanner, whose
  strings go to :func:`_string`; a long string is read by the C ``scanstring``
  a slice at a time, each slice cut where no escape sequence is under way (no
  backslash among the six characters before the cut: the longest escape,
  ``\\uXXXX``, is six characters long, and a surrogate pair is never split);
* the pieces are joined by :func:`~server.lsp.long_join.join_pieces`.

The result is exactly ``json.loads(body)``'s.  Anything unusual (a body that
is not plain UTF-8 JSON, an error anywhere, escapes too dense to cut between)
gives the work to ``json.loads(body)`` itself, which returns the same object or
raises the same error as before.  ``tests/lsp/test_long_message.py`` compares
the two on long strings full of escapes, surrogates and errors.
"""

from __future__ import annotations

import codecs
import json
import json.decoder
import json.scanner
from collections.abc import Callable
from typing import Any

from server.lsp.long_join import join_pieces

# Both in the standard library's json package, not in its type stubs: the C string reader (the one json.loads
# uses) and the pure-Python scanner, which hands every string to the decoder's ``parse_string``.
scanstring: Callable[[str, int, bool], tuple[str, int]] = vars(json.decoder)["scanstring"]
_python_scanner: Callable[[json.JSONDecoder], Callable[[str, int], tuple[Any, int]]] = vars(json.scanner)[
    "py_make_scanner"
]

#: Bodies shorter than this are decoded at once, on the event loop (1 MB: ~3 ms).
LONG_BODY_BYTES = 1 << 20
#: Bytes decoded, or characters of a string read, at a time (~1-3 ms of the lock each).
SLICE = 1 << 20
#: The longest escape sequence: a cut with no backslash this far before it is never inside one.
_LONGEST_ESCAPE = 6
#: How many escapes in a row are stepped back over when looking for a cut, before reading the rest at once.
_MAX_STEPS = 64


def decode_long_body(body: bytes) -> Any:
    """``json.loads(body)``, done in slices so that other threads run between them (see the module's docstring)."""
    if body[:3] == codecs.BOM_UTF8 or 0 in body[:4]:  # a BOM or UTF-16/32: json.loads's own detection decides
        return json.loads(body)
    try:
        return _Decoder().decode(_utf8_text(body))
    except Exception:  # noqa: BLE001 - any error is reported exactly as json.loads reports it
        return json.loads(body)


def _utf8_text(body: bytes) -> str:
    """``body.decode("utf-8")``, a slice at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(body)
    pieces = [decoder.decode(view[start : start + SLICE]) for start in range(0, len(body), SLICE)]
    pieces.append(decoder.decode(b"", final=True))
    view.release()
    return join_pieces(pieces)


class _Decoder(json.JSONDecoder):
    """The standard decoder with the Python scanner, whose strings are read by :func:`_string`."""

    def __init__(self) -> None:
        super().__init__()
        self.parse_string = _string
        self.scan_once = _python_scanner(self)


def _string(text: str, end: int, strict: bool = True) -> tuple[str, int]:
    """``scanstring(text, end, strict)`` (the string whose first character is at ``end``), a slice at a time."""
    pieces: list[str] = []
    start = end
    while len(text) - start > SLICE:
        cut = _cut(text, start + SLICE, start)
        if cut is None:
            break
        piece, stop = scanstring(text[start:cut] + '"', 0, strict)
        pieces.append(piece)
        if stop < cut - start + 1:  # the string ended inside this slice (its quote, not the one added)
            return join_pieces(pieces), start + stop
        start = cut
    piece, stop = scanstring(text, start, strict)
    pieces.append(piece)
    return join_pieces(pieces), stop


def _cut(text: str, at: int, floor: int) -> int | None:
    """A place at or before ``at`` (after ``floor``) that no escape sequence spans, or None if none is near."""
    for _ in range(_MAX_STEPS):
        backslash = text.rfind("\\", at - _LONGEST_ESCAPE, at)
        if backslash < 0:
            return at
        at = backslash  # an escape may start here: the six characters before it decide
        if at - floor <= _LONGEST_ESCAPE:
            return None
    return None
