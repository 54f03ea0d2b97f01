"""LaTeX math, one link at a time: its tokens, and the calc-language text it means.

A math segment (``latex.py`` finds them) is cut into equations and links at
its relations; :func:`translate_link` turns one link into calc-language text
(``\\frac{a}{b}`` into ``((a) / (b))``, ``9 \\times 10^{10}`` into ``9e10``,
``1.5\\,\\text{ms}`` into ``1.5 ms``), with, for each character, the range of
the LaTeX it came from, so a diagnostic lands on the math as written.  A link
with anything it cannot read for certain (a symbol, a Greek letter, a
``\\text`` that is not a unit, an ambiguous ``a / b \\times 10^{n}``) gives
None: such a link is left alone, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t]*(?:\r\n|\r|\n)[ \t]*(?:>[ \t]*)+|\s+|~|\\[,;:!> ]|&)  # a quote's '>' starts no relation
  | (?P<skip>\\(?:begin|end)\s*\{(?:aligned|align\*?|split|gathered|gather\*?|equation\*?)\}
        |\\(?:tag\*?|label)\s*\{[^{}]*\}
        |\\(?:displaystyle|textstyle|nonumber|notag|quad|qquad|thinspace|medspace|thickspace|enspace)(?![A-Za-z]))
  | (?P<number>\d+(?:(?:\{,\}|,|\\,)\d{3}(?!\d))*(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<command>\\[A-Za-z]+)
  | (?P<symbol>\\.)
  | (?P<char>.)
    """,
    re.S | re.X,
)
#: Separators between two equations of one segment (``\\quad`` and friends are spacing, but between equations).
_QUAD = re.compile(r"\\q?quad(?![A-Za-z])")

_TIMES = {r"\cdot", r"\times", r"\ast", r"\cdotp", "*", "×", "·", "⋅"}
_DIVIDE = {"/", "÷", r"\div"}
_SIZING = {r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr",
           r"\biggl", r"\biggr", r"\Biggl", r"\Biggr"}  # fmt: skip
_FRACTIONS = {r"\frac", r"\dfrac", r"\tfrac", r"\cfrac"}
_TEXT = {r"\text", r"\textrm", r"\textnormal", r"\mathrm", r"\mbox", r"\textup", r"\mathup"}
_TRANSPARENT = {r"\boxed", r"\mathbf", r"\bm", r"\boldsymbol"}
_CEILINGS = {r"\lceil": "ceil(", "⌈": "ceil(", r"\lfloor": "floor(", "⌊": "floor("}
_CLOSING = {r"\rceil", "⌉", r"\rfloor", "⌋", ")", "]"}
_MICRO = {r"\mu", "µ", "μ"}
#: Deepest nesting of groups read (deeper math is left alone; the calc parser has its own bound).
MAX_DEPTH = 40


class LatexToken(NamedTuple):
    """One token of LaTeX math: its kind (a group name of ``_TOKEN``), text and range in the segment."""

    kind: str
    text: str
    start: int
    end: int


class Atom(NamedTuple):
    """A piece of calc text and the range of the math it came from."""

    kind: str  # num, op, open, close, powclose, pownum, unit, unitslash, pct
    text: str
    start: int
    end: int
    glue: bool = False  # written right after the previous atom, with no space


class Translation(NamedTuple):
    """A link as calc-language text, with the math range each of its characters came from."""

    text: str
    origins: tuple[tuple[int, int], ...]


class _Unreadable(Exception):
    """The link holds something that is not plain arithmetic."""


def latex_tokens(text: str) -> list[LatexToken]:
    """The tokens of a math segment's text, spacing included (``split_equations`` drops it)."""
    found = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "char"
        if kind == "skip" and _QUAD.fullmatch(match.group()):
            kind = "quad"
        found.append(LatexToken(kind, match.group(), match.start(), match.end()))
    return found


def translate_link(tokens: list[LatexToken], source: str, is_unit: Callable[[str], bool]) -> Translation | None:
    """The calc-language text of one link (tokens without spaces), or None when it is not plain arithmetic."""
    if not tokens:
        return None
    reader = _LinkReader(tokens, source, is_unit)
    try:
        reader.sequence(closer=None, depth=0)
    except _Unreadable:
        return None
    if reader.pos != len(tokens) or not reader.atoms:
        return None
    parts: list[str] = []
    origins: list[tuple[int, int]] = []
    for atom in reader.atoms:
        if parts and not atom.glue:
            parts.append(" ")
            origins.append((origins[-1][1], origins[-1][1]))
        parts.append(atom.text)
        origins.extend([(atom.start, atom.end)] * len(atom.text))
    return Translation("".join(parts), tuple(origins))


class _LinkReader:
    """Reads one link's tokens into atoms (raises :class:`_Unreadable` on anything else)."""

    def __init__(self, tokens: list[LatexToken], source: str, is_unit: Callable[[str], bool]) -> None:
        self.tokens = tokens
        self.source = source
        self.is_unit = is_unit
        self.pos = 0
        self.atoms: list[Atom] = []

    def peek(self, ahead: int = 0) -> LatexToken | None:
        at = self.pos + ahead
        return self.tokens[at] if at < len(self.tokens) else None

    def take(self) -> LatexToken:
        token = self.peek()
        if token is None:
            raise _Unreadable
        self.pos += 1
        return token

    def last_kind(self) -> str:
        return self.atoms[-1].kind if self.atoms else ""

    def emit(self, kind: str, text: str, start: int, end: int, glue: bool = False) -> None:
        self.atoms.append(Atom(kind, text, start, end, glue))

    def sequence(self, closer: str | None, depth: int) -> None:
        """Atoms up to ``closer`` (left for the caller) or the end of the link."""
        if depth > MAX_DEPTH:
            raise _Unreadable
        while (token := self.peek()) is not None:
            if closer is not None and token.text == closer:
                return
            self.item(depth)
        if closer is not None:
            raise _Unreadable

    def item(self, depth: int) -> None:
        token = self.take()
        text = token.text
        if token.kind == "number":
            self.number(token)
        elif text in ("+", "-", "−"):
            self.emit("op", "-" if text != "+" else "+", token.start, token.end)
        elif text in _TIMES:
            self.emit("op", "*", token.start, token.end)
        elif text in _DIVIDE:
            glue = self.last_kind() == "unit" and self.unit_follows()
            self.emit("unitslash" if glue else "op", "/", token.start, token.end, glue)
        elif text in ("(", "["):
            self.emit("open", "(", token.start, token.end)
        elif text in _CLOSING:
            self.emit("close", ")", token.start, token.end)
        elif text in _CEILINGS:
            self.emit("open", _CEILINGS[text], token.start, token.end)
        elif text in _SIZING:
            self.sized(token)
        elif text == "{" or text in _TRANSPARENT:
            self.group(token, token if text == "{" else self.opening(), "(", "close", depth)
        elif text == "^":
            self.power(token, depth)
        elif text in _FRACTIONS:
            self.fraction(token, depth)
        elif text == r"\sqrt":
            self.group(token, self.opening(), "sqrt(", "close", depth)
        elif text in _TEXT:
            self.text_unit(token)
        elif text in _MICRO:
            self.micro(token)
        elif text == r"\%":
            if self.last_kind() not in ("num", "close"):
                raise _Unreadable
            self.emit("pct", "%", token.start, token.end, glue=True)
        else:
            raise _Unreadable  # a symbol, a Greek letter, an unknown command, '%' (a comment in TeX)

    def sized(self, size: LatexToken) -> None:
        """``\\left(``, ``\\bigr]``, ``\\left\\lceil``: the delimiter, from the sizing command on; ``\\left.`` is none."""
        delimiter = self.take()
        text = delimiter.text
        if text in ("(", "["):
            self.emit("open", "(", size.start, delimiter.end)
        elif text in _CEILINGS:
            self.emit("open", _CEILINGS[text], size.start, delimiter.end)
        elif text in _CLOSING:
            self.emit("close", ")", size.start, delimiter.end)
        elif text != ".":
            raise _Unreadable  # \left| (an absolute value), \left\{ (a set)

    def opening(self) -> LatexToken:
        token = self.take()
        if token.text != "{":
            raise _Unreadable
        return token

    def group(self, first: LatexToken, brace: LatexToken, opener: str, closed: str, depth: int) -> None:
        """``{...}`` read as parentheses (``opener`` may be a call such as ``sqrt(``)."""
        self.emit("open", opener, first.start, brace.end)
        self.sequence("}", depth + 1)
        close = self.take()
        self.emit(closed, ")", close.start, close.end)

    def fraction(self, command: LatexToken, depth: int) -> None:
        """``\\frac{a}{b}`` as ``((a) / (b))``."""
        self.emit("open", "(", command.start, command.end)
        self.group(command, self.opening(), "(", "close", depth)
        divide = self.peek()
        if divide is None:
            raise _Unreadable
        self.emit("op", "/", divide.start, divide.start)
        self.group(divide, self.opening(), "(", "close", depth)
        self.emit("close", ")", self.atoms[-1].start, self.atoms[-1].end)

    def power(self, caret: LatexToken, depth: int) -> None:
        """``x^{e}`` or ``x^2`` (one digit: ``10^10`` is 10¹ then 0 in TeX)."""
        if self.last_kind() not in ("num", "close"):
            raise _Unreadable  # a unit's power, or nothing to raise
        self.emit("op", "^", caret.start, caret.end)
        token = self.take()
        if token.text == "{":
            self.group(token, token, "(", "powclose", depth)
        elif token.kind == "number" and len(token.text) == 1:
            self.emit("pownum", token.text, token.start, token.end)
        else:
            raise _Unreadable

    def number(self, token: LatexToken) -> None:
        """A number; ``a \\times 10^{n}`` and ``10^{n}`` become one literal, as they are one number."""
        digits = re.sub(r"\{,\}|,|\\,", "", token.text)
        scientific = self.scientific()
        if scientific is not None:
            exponent, end, count = scientific
            after_divide = self.last_kind() == "op" and self.atoms[-1].text == "/"
            if after_divide or "e" in digits.lower():
                raise _Unreadable  # a / b \times 10^{n}: (a / b) · 10^n, or a / (b · 10^n)?
            self.pos += count
            self.emit("num", f"{digits}e{exponent}", token.start, end)
            return
        power = self.exponent(self.pos - 1) if digits == "10" else None
        if power is not None:
            exponent, end, count = power
            self.pos += count
            self.emit("num", f"1e{exponent}", token.start, end)
            return
        self.emit("num", digits, token.start, token.end)

    def scientific(self) -> tuple[str, int, int] | None:
        """After a mantissa: ``\\times 10^{n}`` as (n, where it ends, how many tokens it takes)."""
        times, ten = self.peek(), self.peek(1)
        if times is None or ten is None or times.text not in _TIMES or ten.text != "10":
            return None
        power = self.exponent(self.pos + 1)
        if power is None:
            return None
        exponent, end, count = power
        return exponent, end, count + 2

    def exponent(self, at: int) -> tuple[str, int, int] | None:
        """``^{±n}`` or ``^n`` after the token at ``at`` (a ``10``): (n, where it ends, how many tokens it takes)."""
        tokens = self.tokens[at + 1 : at + 6]
        if len(tokens) < 2 or tokens[0].text != "^":
            return None
        if tokens[1].kind == "number" and len(tokens[1].text) == 1:
            return tokens[1].text, tokens[1].end, 2
        if tokens[1].text != "{":
            return None
        rest, sign = tokens[2:], ""
        if rest and rest[0].text in ("+", "-", "−"):
            sign = "" if rest[0].text == "+" else "-"
            rest = rest[1:]
        if len(rest) < 2 or rest[0].kind != "number" or not rest[0].text.isdigit() or rest[1].text != "}":
            return None
        return sign + rest[0].text, rest[1].end, 4 + (len(tokens) - 2 - len(rest))

    def unit_follows(self) -> bool:
        following = self.peek()
        return following is not None and (following.text in _TEXT or following.text in _MICRO)

    def braced(self) -> tuple[str, LatexToken]:
        """The raw text of a ``{...}`` group with no group inside, and its closing brace."""
        brace = self.opening()
        close = self.take()
        while close.text != "}":
            if close.text == "{":
                raise _Unreadable
            close = self.take()
        return self.source[brace.end : close.start].strip(), close

    def text_unit(self, command: LatexToken) -> None:
        """``\\text{GB/s}`` after a number or a group (or after a unit's ``/``): a unit, or unreadable."""
        content, close = self.braced()
        self.unit(re.sub(r"\s*/\s*", "/", content), command.start, close.end)

    def micro(self, prefix: LatexToken) -> None:
        """``\\mu s``, ``\\mu\\text{s}``: a micro unit (``\\mu`` alone is a symbol)."""
        following = self.peek()
        if following is not None and following.text in _TEXT:
            self.take()
            word, end = self.braced()
        else:
            letters = []
            while (letter := self.peek()) is not None and letter.kind == "char" and letter.text.isalpha():
                letters.append(self.take())
            if not letters:
                raise _Unreadable
            word, end = "".join(t.text for t in letters), letters[-1]
        self.unit("u" + word, prefix.start, end.end)

    def unit(self, content: str, start: int, end: int) -> None:
        """A unit written after a number or a group; ``B`` is spelled ``byte`` (in math it cannot be a name).

        After ``a / 2`` only a rate may follow (``10\\,\\text{GB} / 2\\,\\text{GB/s}``):
        ``6 / 2\\,\\text{ms}`` may mean 3 ms or 3 per ms, so it is left alone.
        """
        slash = self.last_kind() == "unitslash"
        if self.last_kind() not in ("num", "close") and not slash:
            raise _Unreadable
        divided = len(self.atoms) >= 2 and self.last_kind() == "num" and self.atoms[-2].text == "/"
        following = self.peek()
        if divided and "/" not in content and not (following is not None and following.text in _DIVIDE):
            raise _Unreadable
        parts = content.replace("·", "/").split("/")
        if not content or any(not part or not self.is_unit(part) for part in parts):
            raise _Unreadable
        text = "/".join("byte" if part == "B" else part for part in content.split("/"))
        self.emit("unit", text, start, end, glue=slash)
