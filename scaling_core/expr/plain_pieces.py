"""The pieces (tokens) of a plain calc line, for the reader of ``plain_lines.py``.

A plain line is split the way the lexer splits it (its token patterns, in its
order), less what a plain line never has.  Most words of a calc line are
whole tokens written between spaces: a name (``flops_3``), an integer
(``8192``) or an operator (``*``, ``=``, ``->``).  :func:`line_pieces` reads
those with string tests and no regular expression, and scans only the other
words (``FLOP/byte``, ``1.97e14``, ``tpu_v5e.hbm_bw``, ``(a``) with the
token pattern: measured on the bench's book-like draft, 25% less time for the
same pieces (``tests/core/test_plain_lines.py`` compares the two readings).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from sys import intern

from scaling_core.expr.lexer import IDENTIFIER, MAGNITUDE_SUFFIXES, NUMBER, OPERATOR, OPERATORS, SUFFIX
from scaling_core.expr.tokens import TokenKind
from scaling_core.text import Span, new_span

#: One piece of a line: spaces, then a number (with its magnitude suffix), a name, an operator or a comment.
#: The alternatives are the lexer's (``lexer._TOKEN``) in its order, less those a plain line never has.
PIECE = re.compile(rf"( *)(?:({NUMBER})({SUFFIX})?|({IDENTIFIER})|({OPERATOR})|(#[^\r\n]*))")

_NUMBER, _NAME, _END = TokenKind.NUMBER, TokenKind.IDENT, TokenKind.EOF
#: Operators a plain line may hold; any other (a power, a comma, a bracket) sends the line the general way.
PLAIN_OPERATORS = {
    op: kind for op, kind in OPERATORS.items()
    if kind not in (TokenKind.POWER, TokenKind.COMMA, TokenKind.LBRACKET, TokenKind.RBRACKET)
}  # fmt: skip
#: The plain operators the token pattern reads as one whole operator when written alone between spaces.
_WORD_OPERATORS = {
    op: kind for op, kind in PLAIN_OPERATORS.items() if (match := PIECE.fullmatch(op)) and match.group(5) == op
}  # fmt: skip
#: Pieces a plain line may have: longer lines (flat chains thousands of terms long) are read the general way.
MAX_PIECES = 160

#: A piece: kind, text, span, whether spaces precede it, a number's value.
Piece = tuple[TokenKind, str, Span, bool, float]


class NotPlain(Exception):
    """The line is not plain: read it with the general lexer and parser."""


def line_pieces(line: str, base: int) -> list[Piece]:
    """The tokens of a plain ``line`` (no trailing space) at offset ``base``, as the lexer makes them, and two end pieces.

    Raises :class:`NotPlain` at a character no plain piece matches, an
    operator a plain line never has, or more than :data:`MAX_PIECES` pieces.
    """
    pieces: list[Piece] = []
    append = pieces.append
    if "#" in line:  # a comment runs to the end of the line, spaces and all: scan the line as one text
        pos = _scan(line, base, append)
    else:
        pos = base
        operators = _WORD_OPERATORS
        for word in line.split(" "):
            if not word:  # one of several spaces in a row (or at the start)
                pos += 1
                continue
            end = pos + len(word)
            kind = operators.get(word)
            if kind is not None:
                append((kind, word, new_span(Span, (pos, end)), True, 0.0))
            elif word.isascii() and word.isidentifier():  # the identifier pattern, on ASCII text
                # Interned: the trees' names and the references made from them share one string per name.
                append((_NAME, intern(word), new_span(Span, (pos, end)), True, 0.0))
            elif word.isdigit() and word.isascii():  # an integer with no `_` and no magnitude suffix
                append((_NUMBER, word, new_span(Span, (pos, end)), True, float(word)))
            elif _scan(word, pos, append) != end:
                raise NotPlain  # a character no piece matched (findall skipped it)
            pos = end + 1
        pos -= 1  # no space after the last word
    if pos - base != len(line) or len(pieces) > MAX_PIECES:  # a character no piece matched (findall skipped it)
        raise NotPlain
    end_piece = (_END, "", new_span(Span, (pos, pos)), True, 0.0)
    pieces += (end_piece, end_piece)  # two: the reader may look one piece past the end
    return pieces


def scanned_pieces(line: str, base: int) -> list[Piece]:
    """:func:`line_pieces` made by the token pattern alone, word fast path off (tests compare the two)."""
    pieces: list[Piece] = []
    pos = _scan(line, base, pieces.append)
    if pos - base != len(line) or len(pieces) > MAX_PIECES:
        raise NotPlain
    end_piece = (_END, "", new_span(Span, (pos, pos)), True, 0.0)
    return [*pieces, end_piece, end_piece]


def _scan(text: str, pos: int, append: Callable[[Piece], object]) -> int:
    """Append the pieces of ``text`` (at offset ``pos``, after a space or a line's start); the offset reached.

    The offset falls short of the end of ``text`` when findall skipped a character no piece matches.
    """
    spaced = True
    operators = PLAIN_OPERATORS
    for spaces, number, suffix, name, op, comment in PIECE.findall(text):
        if spaces:
            pos += len(spaces)
            spaced = True
        if name:
            end = pos + len(name)
            append((_NAME, name, new_span(Span, (pos, end)), spaced, 0.0))
        elif op:
            kind = operators.get(op)
            if kind is None:
                raise NotPlain
            end = pos + len(op)
            append((kind, op, new_span(Span, (pos, end)), spaced, 0.0))
        elif number:
            value = float(number.replace("_", "")) if "_" in number else float(number)
            if suffix:
                value *= MAGNITUDE_SUFFIXES[suffix]
                number += suffix
            end = pos + len(number)
            append((_NUMBER, number, new_span(Span, (pos, end)), spaced, value))
        else:  # a comment, to the end of the line
            pos += len(comment)
            spaced = True
            continue
        pos = end
        spaced = False
    return pos
