"""The calc-language lexer: text -> tokens plus diagnostics; never raises.

Notation read as authors write it: ``×`` and ``·`` multiply (``·`` also joins
units), ``÷`` divides, ``^`` and ``**`` are powers, ``−`` is minus, ``→`` is
``->``, superscript digits are exponents, ``#`` starts a comment.  A number
may carry a magnitude suffix written against it (``8k``, ``3.48M``, ``70B``,
``15T``); a unit written against it (``188us``) is a separate name token.
Newlines end statements except inside brackets.
"""

from __future__ import annotations

import re

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.expr.tokens import Token, TokenKind
from scaling_core.text import Span

MAGNITUDE_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}

_ASCII_DIGITS = frozenset("0123456789")
_NUMBER = re.compile(r"(?:[0-9][0-9_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_IDENT = re.compile(r"[^\W\d](?:(?![⁰¹²³⁴⁵⁶⁷⁸⁹])\w)*")
_SUFFIX = re.compile(r"[kKMBT](?!\w)")
_SPACE = re.compile(r"[ \t\f\v\u00a0]+")
_SUPERSCRIPTS = {"⁰": 0, "¹": 1, "²": 2, "³": 3, "⁴": 4, "⁵": 5, "⁶": 6, "⁷": 7, "⁸": 8, "⁹": 9}
_SUPER_RUN = re.compile("⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")

# Longest spellings first.
_OPERATORS: tuple[tuple[str, TokenKind], ...] = (
    ("**", TokenKind.POWER),
    ("->", TokenKind.ARROW),
    ("+-", TokenKind.PLUSMINUS),
    ("~=", TokenKind.COMPARE),
    ("==", TokenKind.COMPARE),
    ("<=", TokenKind.COMPARE),
    (">=", TokenKind.COMPARE),
    ("≈", TokenKind.COMPARE),
    ("≤", TokenKind.COMPARE),
    ("≥", TokenKind.COMPARE),
    ("<", TokenKind.COMPARE),
    (">", TokenKind.COMPARE),
    ("±", TokenKind.PLUSMINUS),
    ("→", TokenKind.ARROW),
    ("=", TokenKind.ASSIGN),
    ("+", TokenKind.PLUS),
    ("-", TokenKind.MINUS),
    ("−", TokenKind.MINUS),
    ("*", TokenKind.STAR),
    ("×", TokenKind.STAR),
    ("·", TokenKind.MIDDOT),
    ("⋅", TokenKind.MIDDOT),
    ("/", TokenKind.SLASH),
    ("÷", TokenKind.SLASH),
    ("^", TokenKind.POWER),
    ("%", TokenKind.PERCENT),
    (".", TokenKind.DOT),
    (",", TokenKind.COMMA),
    ("(", TokenKind.LPAREN),
    (")", TokenKind.RPAREN),
    ("[", TokenKind.LBRACKET),
    ("]", TokenKind.RBRACKET),
)
_OPENERS = {TokenKind.LPAREN, TokenKind.LBRACKET}
_CLOSERS = {TokenKind.RPAREN, TokenKind.RBRACKET}


def _superscript_value(text: str) -> int:
    digits = "".join(str(_SUPERSCRIPTS[c]) for c in text if c in _SUPERSCRIPTS)
    return -int(digits) if text.startswith("⁻") else int(digits)


def tokenize(text: str, base: int = 0) -> tuple[list[Token], list[Diagnostic]]:
    """Split ``text`` into tokens; spans are offset by ``base`` code points."""
    tokens: list[Token] = []
    diagnostics: list[Diagnostic] = []
    depth = 0
    pos = 0
    spaced = True
    length = len(text)
    while pos < length:
        char = text[pos]
        match = _SPACE.match(text, pos)
        if match:
            pos = match.end()
            spaced = True
            continue
        if char == "#":
            newline = text.find("\n", pos)
            pos = length if newline < 0 else newline
            continue
        if char in "\r\n":
            if depth == 0 and tokens and tokens[-1].kind is not TokenKind.NEWLINE:
                tokens.append(Token(TokenKind.NEWLINE, "\n", Span(base + pos, base + pos + 1)))
            pos += 1
            spaced = True
            continue
        token, pos = _next_token(text, pos, base, spaced, diagnostics)
        spaced = False
        if token is None:
            continue
        if token.kind in _OPENERS:
            depth += 1
        elif token.kind in _CLOSERS:
            depth = max(depth - 1, 0)
        tokens.append(token)
    tokens.append(Token(TokenKind.EOF, "", Span(base + length, base + length)))
    return tokens, diagnostics


def _next_token(
    text: str, pos: int, base: int, spaced: bool, diagnostics: list[Diagnostic]
) -> tuple[Token | None, int]:
    char = text[pos]
    if char in _ASCII_DIGITS or (char == "." and text[pos + 1 : pos + 2] in _ASCII_DIGITS and pos + 1 < len(text)):
        return _number(text, pos, base, spaced)
    match = _SUPER_RUN.match(text, pos)
    if match:
        value = float(_superscript_value(match.group()))
        span = Span(base + pos, base + match.end())
        return Token(TokenKind.SUPERSCRIPT, match.group(), span, value, spaced=spaced), match.end()
    match = _IDENT.match(text, pos)
    if match:
        span = Span(base + pos, base + match.end())
        return Token(TokenKind.IDENT, match.group(), span, spaced=spaced), match.end()
    if char == '"':
        end = text.find('"', pos + 1)
        if end < 0 or "\n" in text[pos:end]:
            stop = text.find("\n", pos)
            stop = len(text) if stop < 0 else stop
            diagnostics.append(
                make_diagnostic("S001", "unterminated string: add a closing '\"'", Span(base + pos, base + stop))
            )
            return None, stop
        return Token(TokenKind.STRING, text[pos + 1 : end], Span(base + pos, base + end + 1), spaced=spaced), end + 1
    for spelling, kind in _OPERATORS:
        if text.startswith(spelling, pos):
            end = pos + len(spelling)
            return Token(kind, spelling, Span(base + pos, base + end), spaced=spaced), end
    diagnostics.append(
        make_diagnostic(
            "S003",
            f"invalid character {char!r} (U+{ord(char):04X}) in a calc statement",
            Span(base + pos, base + pos + 1),
        )
    )
    return None, pos + 1


def _number(text: str, pos: int, base: int, spaced: bool) -> tuple[Token, int]:
    match = _NUMBER.match(text, pos)
    assert match is not None  # the caller saw a digit
    end = match.end()
    value = float(match.group().replace("_", ""))
    suffix = ""
    suffix_match = _SUFFIX.match(text, end)
    if suffix_match:
        suffix = suffix_match.group()
        value *= MAGNITUDE_SUFFIXES[suffix]
        end = suffix_match.end()
    span = Span(base + pos, base + end)
    return Token(TokenKind.NUMBER, text[pos:end], span, value, suffix, spaced), end
