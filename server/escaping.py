"""Text that any output may carry: terminal-safe strings and always-writable JSON.

Report formats (text, JSON, SARIF, JUnit, GitHub) echo file names and source
lines that an author, or an attacker's pull request, controls: a terminal
escape sequence or a file name that is not UTF-8 must never reach a terminal
raw or make a report unwritable.
"""

from __future__ import annotations

import json
import re

#: What a terminal or a CI log may not receive raw: C0 controls but tab and newline, DEL, C1 controls,
#: lone surrogates (a file name that is not UTF-8).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # a control picture, one column wide: ␛ for ESC
    if code == 0x7F:
        return "\u2421"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # a byte of a file name that is not UTF-8
    return f"\\u{code:04x}" if code >= 0xD800 else f"\\x{code:02x}"


def printable(text: str) -> str:
    """``text`` safe for a terminal: C0 controls (ESC too) become control pictures (``␛``), C1 controls
    and bytes that are not UTF-8 backslash escapes; tabs and newlines stay."""
    return _UNPRINTABLE.sub(_shown, text)


def json_text(data: object, indent: int = 2) -> str:
    """JSON (UTF-8, not ASCII-escaped) that can always be written: a lone surrogate is a ``\\uXXXX`` escape."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
