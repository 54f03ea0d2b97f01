"""Code spans read as checked arithmetic: equations, chains of links, and what could not be read.

A code span holds one or more equations, separated by ``;`` or by a full
stop after a unit or word followed by a space (``= 64kB. 64e3 / 4.5e10 =
1.4us``).  Each equation is a chain of links joined by ``=`` or by an
approximate relation (``≈``, ``~=``, ``~``)::

    span     = equation ((";" | ". ") equation)*
    equation = link (("=" | "≈" | "~=" | "~") link)+
    link     = expr [tolerance]         # a tolerance only on the last link

Links are split at the relations outside brackets and parsed one by one, so
a link that cannot be read (``KV size``, ``2BD``) costs only itself: it is
kept as a link without an expression, which the checker skips visibly.  :func:`looks_checked` tells arithmetic that was meant to
be checked (``2 * nosuch = 4``) from plain code (``x = 5``, ``x += 1``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import DTYPE_BYTES, parse_claim_expression
from scaling_core.expr.plain_lines import read_plain_chain
from scaling_core.expr.tokens import CHAIN_JOINS, Token, TokenKind, canonical_comparison
from scaling_core.records import record
from scaling_core.text import Span

#: A :class:`Token`, or a plain line's piece: a tuple whose first two fields are a token's kind and text.
Lexeme = tuple[Any, ...]
_OPENERS = (TokenKind.LPAREN, TokenKind.LBRACKET)
_CLOSERS = (TokenKind.RPAREN, TokenKind.RBRACKET)
_OPERATORS = (TokenKind.PLUS, TokenKind.MINUS, TokenKind.STAR, TokenKind.SLASH, TokenKind.POWER, TokenKind.MIDDOT)
#: Where one equation ends and the next begins: ``;``, or a full stop after a letter or ``%`` then a space.
_SEPARATOR = re.compile(r";|(?<=[^\W\d_]|%)\.(?=\s|$)")


@record(slots=True)
class ChainLink:
    """One link of a chain: its expression (None when it cannot be read) and the relation before it."""

    expr: ast.Expr | None
    relation: str  # "" for the first link, else "=" or "≈"
    span: Span
    tolerance: ast.Tolerance | None = None


@record(slots=True)
class Equation:
    """One equation of a code span: its links (fewer than two: not a chain) and its whole span."""

    links: tuple[ChainLink, ...]
    span: Span
    #: Whether it looks like arithmetic meant to be checked (see :func:`looks_checked`).
    looks_checked: bool


def read_code_span(text: str, base: int, is_unit: Callable[[str], bool], *, plain: bool = True) -> list[Equation]:
    """Every equation of a code span's text (which starts at offset ``base``), in order.

    ``plain``: an equation whose links are all plain is read by
    :func:`~scaling_core.expr.plain_lines.read_plain_chain` (the same
    links, without the general lexer and parser; tests turn it off to compare).
    """
    equations = []
    for start, end in split_equations(text):
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        piece = piece.strip()
        if piece:
            at = base + start + lead
            read = read_plain_chain(piece, at, is_unit) if plain else None
            if read is not None:
                links, pieces = read
                chain = tuple([ChainLink(*link) for link in links])
                equations.append(Equation(chain, Span(at, at + len(piece)), looks_checked(pieces)))
            else:
                equations.append(read_equation(piece, at, is_unit))
    return equations


def split_equations(text: str) -> list[tuple[int, int]]:
    """Where each equation of ``text`` lies: split at ``;`` and at ``. `` after a letter or ``%``, outside brackets."""
    bounds = []
    start = 0
    for match in _SEPARATOR.finditer(text):
        prefix = text[: match.start()]
        if prefix.count("(") + prefix.count("[") <= prefix.count(")") + prefix.count("]"):
            bounds.append((start, match.start()))
            start = match.end()
    bounds.append((start, len(text)))
    return bounds


def read_equation(text: str, base: int, is_unit: Callable[[str], bool]) -> Equation:
    """One equation: its tokens split into links at the relations outside brackets, each parsed alone."""
    tokens, problems = tokenize(text, base)
    tildes = [p.span for p in problems if text[p.span.start - base : p.span.end - base] == "~"]
    if tildes:  # '~' is no calc-language token: here it is an approximate relation
        tokens = sorted(
            tokens + [Token(TokenKind.COMPARE, "~", span) for span in tildes],
            key=lambda t: (t.span.start, t.kind is TokenKind.EOF),
        )
    unreadable = [p.span for p in problems if p.span not in tildes]
    pieces = split_links(tokens)
    last = len(pieces) - 1
    links = tuple(_read_link(piece, relation, around, unreadable, is_unit, i == last)
                  for i, (piece, relation, around) in enumerate(pieces))  # fmt: skip
    return Equation(links, Span(base, base + len(text)), looks_checked(tokens))


def split_links(tokens: list[Token]) -> list[tuple[list[Token], str, Span]]:
    """Each link's tokens, the relation before it and the relations around it, split outside brackets.

    The span around a link runs from the relation before it to the one after
    it: where an empty link (``2 * 3 = = 6``) is shown.
    """
    pieces: list[tuple[list[Token], str, Span]] = []
    current: list[Token] = []
    relation = ""
    before: Span | None = None
    depth = 0
    for token in tokens:
        if token.kind is TokenKind.EOF:
            break
        if token.kind in _OPENERS:
            depth += 1
        elif token.kind in _CLOSERS:
            depth = max(depth - 1, 0)
        elif depth == 0 and _relation(token.kind, token.text):
            pieces.append((current, relation, Span((before or token.span).start, token.span.end)))
            current, relation, before = [], _relation(token.kind, token.text), token.span
            continue
        current.append(token)
    pieces.append((current, relation, before or tokens[-1].span))  # tokens end with the end of input
    return pieces


def looks_checked(tokens: Sequence[Lexeme]) -> bool:
    """Whether an equation looks like arithmetic meant to be checked.

    It does when the text after its last relation starts with a number
    (``= 4``, ``= -3``, ``= (2e3)``) and the text before it holds a number
    and an operation: an arithmetic operator outside square brackets, a call
    (``sqrt(…)``) or a shape (``bf16[…]``).  So ``2 * nosuch = 4`` does;
    ``x = 5``, ``x += 1``, ``f(x) = x^2``, ``f(x) = 2x``, ``arr[i+1] = 0`` and
    ``a == b`` do not.  ``tokens`` end with the end of input; they may be the
    plain reader's pieces, whose first two fields are a token's kind and text.
    """
    last = len(tokens) - 1
    while last >= 0 and not _relation(tokens[last][0], tokens[last][1]):
        last -= 1
    if last < 0:
        return False
    after = [t for t in tokens[last + 1 :] if t[0] not in (TokenKind.LPAREN, TokenKind.MINUS, TokenKind.PLUS)]
    if not after or after[0][0] is not TokenKind.NUMBER:
        return False
    before = tokens[:last]
    if not any(t[0] is TokenKind.NUMBER for t in before):
        return False
    square = 0
    for index, token in enumerate(before):
        following = before[index + 1] if index + 1 < len(before) else None
        kind = token[0]
        if kind is TokenKind.LBRACKET:
            square += 1
        elif kind is TokenKind.RBRACKET:
            square = max(square - 1, 0)
        elif square == 0 and kind in _OPERATORS:
            return True
        elif kind is TokenKind.IDENT and following is not None:
            if following[0] is TokenKind.LPAREN or (following[0] is TokenKind.LBRACKET and token[1] in DTYPE_BYTES):
                return True
    return False


def parse_chain(tokens: list[Token], is_unit: Callable[[str], bool]) -> list[ChainLink] | None:
    """A token list read as one chain: its links, or None when it has no relation or a link cannot be read."""
    pieces = split_links(tokens)
    last = len(pieces) - 1
    links = [
        _read_link(piece, relation, around, [], is_unit, i == last)
        for i, (piece, relation, around) in enumerate(pieces)
    ]
    if len(links) < 2 or any(link.expr is None for link in links):
        return None
    return links


def _relation(kind: TokenKind, text: str) -> str:
    """``=`` or ``≈`` when a token of ``kind`` and ``text`` joins two links of a chain, else ""."""
    if kind is TokenKind.ASSIGN:
        return "="
    if kind is TokenKind.COMPARE:
        return CHAIN_JOINS.get(canonical_comparison(text), "")
    return ""


def _read_link(
    tokens: list[Token], relation: str, around: Span, unreadable: list[Span], is_unit: Callable[[str], bool], last: bool
) -> ChainLink:
    """Parse one link's tokens; a link with an invalid character or a parse error has no expression."""
    if not tokens:
        return ChainLink(None, relation, around)
    span = Span(tokens[0].span.start, tokens[-1].span.end)
    if any(span.start <= bad.start < span.end for bad in unreadable):
        return ChainLink(None, relation, span)
    closing = Token(TokenKind.EOF, "", Span(span.end, span.end))
    expr, tolerance, problem = parse_claim_expression([*tokens, closing], is_unit)
    if problem is not None or (tolerance is not None and not last):
        return ChainLink(None, relation, span)
    return ChainLink(expr, relation, span, tolerance)


def computes(expr: ast.Expr | None) -> bool:
    """Whether a link computes something (an operation, a call, a shape, a conversion), not a name or a number."""
    if isinstance(expr, (ast.Binary, ast.Call, ast.Shape, ast.Convert)):
        return True
    if isinstance(expr, (ast.Unary, ast.WithUnit)):
        return computes(expr.operand)
    return False


def chain_parts(links: tuple[ChainLink, ...]) -> list[tuple[int, int]]:
    """The first and last index of each run of readable links: a link that cannot be read cuts the chain."""
    parts = []
    first = None
    for index, link in enumerate(links):
        if link.expr is None:
            if first is not None:
                parts.append((first, index - 1))
            first = None
        elif first is None:
            first = index
    if first is not None:
        parts.append((first, len(links) - 1))
    return parts


def skipped_spans(links: tuple[ChainLink, ...], unchecked: list[tuple[int, int]]) -> list[tuple[int, Span]]:
    """Each unreadable link with the span of its hint.

    A part of the chain left with a computation but no check (its value
    was cut off by the unreadable link) is covered by the hint of the
    unreadable link after it, or else of the one before it.
    """
    spans = {i: link.span for i, link in enumerate(links) if link.expr is None}
    for first, last in unchecked:
        if last + 1 in spans:
            spans[last + 1] = Span(links[first].span.start, spans[last + 1].end)
        elif first - 1 in spans:
            spans[first - 1] = Span(spans[first - 1].start, links[last].span.end)
    return sorted(spans.items())
