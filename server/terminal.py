"""Colour on a terminal: when to use it, and how the text report looks with it.

The rule is the one ruff, mypy and most command-line tools follow:
``--color=always`` and ``--color=never`` win; otherwise ``NO_COLOR`` (any
non-empty value, https://no-color.org) turns colour off, ``FORCE_COLOR``
(any non-empty value) turns it on, and without either colour is used when the
stream is a terminal.  ``TERM=dumb`` also means no colour.

The report itself is rendered as plain text by the engine
(:func:`scaling_core.render.render_diagnostic`); colouring is a presentation
step done here on its known line shapes, so the core stays free of terminal
concerns.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

COLOR_CHOICES = ("auto", "always", "never")

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_SEVERITY_STYLE = {
    "error": "\x1b[1;31m",
    "warning": "\x1b[1;33m",
    "info": "\x1b[1;34m",
    "hint": "\x1b[1;36m",
}
_GUTTER = "\x1b[34m"
_CARET = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[34m", "hint": "\x1b[36m"}
_FIX = "\x1b[32m"

_HEAD = re.compile(r"^(?P<where>.*?:\d+:\d+:) (?P<severity>error|warning|info|hint) (?P<code>[A-Z]+\d+):")
_GUTTER_LINE = re.compile(r"^(?P<gutter>\d* *\|)(?P<rest>.*)$")
_EQUALS_LINE = re.compile(r"^(?P<pad> *)= (?P<kind>note|fix|see)(?P<rest>.*)$")


def use_color(choice: str, stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Whether to colour output written to ``stream`` under ``--color=choice``."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def colorize_diagnostic(block: str) -> str:
    """Colour one rendered diagnostic: bold location, coloured severity and carets, green fix."""
    lines = block.split("\n")
    head = _HEAD.match(lines[0])
    if head is None:
        return block
    severity = head["severity"]
    style = _SEVERITY_STYLE[severity]
    lines[0] = (
        f"{_BOLD}{head['where']}{_RESET} {style}{severity}{_RESET} {_BOLD}{head['code']}{_RESET}:"
        + lines[0][head.end() :]
    )
    for number, line in enumerate(lines[1:], start=1):
        if gutter := _GUTTER_LINE.match(line):
            rest = gutter["rest"]
            if rest.strip() and set(rest.strip()) == {"^"}:
                rest = f"{_CARET[severity]}{rest}{_RESET}"
            lines[number] = f"{_GUTTER}{gutter['gutter']}{_RESET}{rest}"
        elif equals := _EQUALS_LINE.match(line):
            kind_style = _FIX if equals["kind"] == "fix" else _BOLD
            lines[number] = f"{equals['pad']}{_GUTTER}={_RESET} {kind_style}{equals['kind']}{_RESET}{equals['rest']}"
    return "\n".join(lines)


def colorize_summary(line: str, *, failed: bool) -> str:
    """The summary line, bold, red when the run fails and green when it passes."""
    return f"{_SEVERITY_STYLE['error'] if failed else chr(27) + '[1;32m'}{line}{_RESET}"
