"""Calc lines of the common shapes read straight into syntax trees, without the general lexer and parser.

Most calc lines are short and plain: ``F = 4 * D``, ``t = flops / tpu_v5e.flops_bf16 -> us``,
``w = 2 * D * F byte``, ``t ≈ 2.1 us ± 5%``.  Such a line is split into the lexer's tokens
(``plain_pieces.py``) and its pieces are read by a small parser of the same rules as
:mod:`scaling_core.expr.parser`, restricted to numbers, names, fields,
parentheses, units, ``+ - * / ·``, conversions, comparisons and tolerances.
Anything else (calls, brackets, commas, powers, superscripts, strings, tabs,
an invalid character) and any line that would not parse make the readers give
up (None): the caller then lexes and parses as before.  So a line read here
gives exactly the statement the lexer and parser give, with no diagnostic
(``tests/core/test_plain_lines.py`` compares the two on many lines).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from scaling_core.expr import syntax as ast
from scaling_core.expr.plain_pieces import NotPlain, Piece, line_pieces
from scaling_core.expr.tokens import CHAIN_JOINS, TokenKind, canonical_comparison
from scaling_core.expr.unit_grammar import tolerance_of
from scaling_core.text import Span, new_span

_NUMBER, _NAME, _END = TokenKind.NUMBER, TokenKind.IDENT, TokenKind.EOF
_LPAREN, _RPAREN, _DOT, _SLASH, _PERCENT = (
    TokenKind.LPAREN, TokenKind.RPAREN, TokenKind.DOT, TokenKind.SLASH, TokenKind.PERCENT,
)  # fmt: skip
_PLUS = TokenKind.PLUS
_ADD_OPS = (TokenKind.PLUS, TokenKind.MINUS)
_MUL_OPS = (TokenKind.STAR, TokenKind.SLASH, TokenKind.MIDDOT)
#: Pieces after which a number or name is complete (no unit, field or call), the commonest first.
_LEAF_FOLLOWERS = (
    TokenKind.STAR, TokenKind.EOF, TokenKind.SLASH, TokenKind.PLUS, TokenKind.MINUS, TokenKind.ARROW,
    TokenKind.COMPARE, TokenKind.RPAREN, TokenKind.MIDDOT, TokenKind.PLUSMINUS, TokenKind.ASSIGN,
)  # fmt: skip
_RELATION_KINDS = (TokenKind.ASSIGN, TokenKind.COMPARE)
_UNIT_JOINERS = (TokenKind.SLASH, TokenKind.MIDDOT)
_UNIT_STARTS = (TokenKind.IDENT, TokenKind.PERCENT)
_NOT_A_UNIT_AFTER = (TokenKind.LPAREN, TokenKind.DOT, TokenKind.LBRACKET)  # parser.starts_unit
#: Nesting (parentheses, signs) a plain line may have; deeper lines are read the general way (its limit is 64).
_MAX_DEPTH = 16


def read_plain_block(
    text: str, lines: Sequence[tuple[int, str]], *, following: int | None, contiguous: bool | None,
    is_unit: Callable[[str], bool],
) -> list[ast.Statement] | None:  # fmt: skip
    """The statements of a calc block's ``lines`` if every line is plain, else None.

    The arguments are :func:`~scaling_core.expr.lexer.tokenize_lines`'s; the
    statements are those its tokens parse to, and there is no diagnostic.  A
    block lexed as one run of ``text`` is read here only when its lines are
    that text, one line-break character apart.
    """
    if not lines:
        return None
    if contiguous is None or contiguous:
        for (offset, line), after in zip(lines, lines[1:]):
            stop = offset + len(line)
            if after[0] != stop + 1:
                if contiguous:
                    return None
                break  # not one run: each line is lexed by itself
        else:
            if not _one_run(text, lines, following):
                return None
    statements: list[ast.Statement] = []
    try:
        for offset, line in lines:
            statement = _read_line(line, offset, is_unit)
            if statement is not None:
                statements.append(statement)
    except NotPlain:
        return None
    return statements


def _one_run(text: str, lines: Sequence[tuple[int, str]], following: int | None) -> bool:
    """Whether lines one character apart are ``text`` there with line breaks between (and before ``following``)."""
    for offset, line in lines:
        if not text.startswith(line, offset):
            return False
    for offset, line in lines[:-1]:
        if text[offset + len(line)] not in "\r\n":
            return False
    if following is not None:
        last, line = lines[-1]
        stop = last + len(line)
        return following == stop + 1 and stop < len(text) and text[stop] in "\r\n"
    return True


def read_plain_text(text: str, base: int, is_unit: Callable[[str], bool]) -> list[ast.Statement] | None:
    """The statements of a one-line ``text`` (a ``{calc}`` role) read at ``base`` if it is plain, else None."""
    if "\n" in text or "\r" in text:
        return None
    try:
        statement = _read_line(text, base, is_unit)
    except NotPlain:
        return None
    return [] if statement is None else [statement]


def read_plain_claim(
    text: str, base: int, is_unit: Callable[[str], bool]
) -> tuple[ast.Expr, ast.Tolerance | None] | None:
    """A claim marker's expression ``text`` (``expr [-> unit] [± tol]``) read at ``base`` if it is plain, else None.

    The expression and tolerance are those :func:`~scaling_core.expr.parser.parse_claim_expression` gives.
    """
    if "\n" in text or "\r" in text:
        return None
    try:
        pieces = line_pieces(text.rstrip(" "), base)
        if len(pieces) == 2:
            return None  # nothing to read: the parser's error
        return _claim(pieces, is_unit)
    except NotPlain:
        return None


#: A link of a chain read plain: its expression, the relation before it ("" for the first), span, tolerance.
PlainLink = tuple[ast.Expr, str, Span, "ast.Tolerance | None"]


def read_plain_chain(
    text: str, base: int, is_unit: Callable[[str], bool]
) -> tuple[list[PlainLink], list[Piece]] | None:
    """A code span's equation ``text`` (at ``base``) read as links joined by ``=`` or ``≈``, if every link is plain.

    Returns the links and the equation's pieces (ending with one end piece:
    the tokens :func:`~scaling_core.expr.chain.looks_checked` reads), or None
    when a link is empty or not plain, a tolerance is not on the last link,
    or another comparison appears: the general reading (``chain.read_equation``)
    then decides.  The links are those it gives.
    """
    if "\n" in text or "\r" in text:
        return None
    try:
        pieces = line_pieces(text.rstrip(" "), base)
    except NotPlain:
        return None
    end = len(pieces) - 2
    # Where the links end: at each relation (a relation inside parentheses splits them apart, so neither
    # half reads and the general reading decides) and at the end.
    stops = [index for index, piece in enumerate(pieces) if piece[0] in _RELATION_KINDS]
    stops.append(end)
    links: list[PlainLink] = []
    relation, first = "", 0
    try:
        for index in stops:
            if index == first:
                return None  # an empty link
            last = pieces[index - 1][2][1]
            stop = (_END, "", new_span(Span, (last, last)), True, 0.0)
            expr, tolerance = _claim([*pieces[first:index], stop, stop], is_unit)
            if tolerance is not None and index < end:
                return None  # a tolerance before the last link: that link is unreadable
            links.append((expr, relation, new_span(Span, (pieces[first][2][0], last)), tolerance))
            if index < end:
                op = pieces[index]
                relation = "=" if op[0] is TokenKind.ASSIGN else CHAIN_JOINS.get(canonical_comparison(op[1]), "")
                if not relation:
                    return None  # a comparison that is not a relation
            first = index + 1
    except NotPlain:
        return None
    return links, pieces[:-1]


def _claim(pieces: list[Piece], is_unit: Callable[[str], bool]) -> tuple[ast.Expr, ast.Tolerance | None]:
    """Rule ``claim`` over ``pieces``: ``expr [-> unit] [± tol]`` to the end (raises :class:`NotPlain`)."""
    reader = _Reader(pieces, is_unit)
    expr = reader.expression()
    unit = reader.convert()
    if unit is not None:
        expr = ast.Convert(expr, unit, Span(expr.span.start, unit.span.end))
    tolerance = reader.tolerance()
    reader.finish()
    return expr, tolerance


def _read_line(line: str, base: int, is_unit: Callable[[str], bool]) -> ast.Statement | None:
    """The statement of one plain ``line`` at offset ``base`` (None: a blank or comment line).

    Raises :class:`NotPlain` when the line is not plain or does not parse.
    """
    pieces = line_pieces(line.rstrip(" "), base)
    if len(pieces) == 2:
        return None
    return _Reader(pieces, is_unit).statement()


class _Reader:
    """The parser's rules (``scaling_core.expr.parser``) over the pieces of one plain line."""

    __slots__ = ("pieces", "pos", "is_unit", "depth")

    def __init__(self, pieces: list[Piece], is_unit: Callable[[str], bool]) -> None:
        self.pieces = pieces
        self.pos = 0
        self.is_unit = is_unit
        self.depth = 0

    def statement(self) -> ast.Statement:
        """Rule ``statement``: a definition, a check or a value shown (an import is never plain)."""
        pieces = self.pieces
        first = pieces[0]
        start = first[2][0]
        if first[0] is _NAME and pieces[1][0] is TokenKind.ASSIGN:
            self.pos = 2
            expr = self.expression()
            convert = self.convert()
            return ast.Definition(first[1], first[2], expr, convert, new_span(Span, (start, self.finish())))
        left = self.expression()
        op = pieces[self.pos]
        if op[0] is TokenKind.COMPARE:
            self.pos += 1
            right = self.expression()
            tolerance = self.tolerance()
            span = new_span(Span, (start, self.finish()))
            return ast.Check(left, canonical_comparison(op[1]), right, tolerance, span, op[2])
        convert = self.convert()
        return ast.Show(left, convert, new_span(Span, (start, self.finish())))

    def finish(self) -> int:
        """The end of the statement read, which must end the line."""
        if self.pieces[self.pos][0] is not _END:
            raise NotPlain
        return self.pieces[self.pos - 1][2][1]

    def expression(self) -> ast.Expr:
        """Rule ``expr``."""
        pieces = self.pieces
        left = self.term()
        while (op := pieces[self.pos])[0] in _ADD_OPS:
            self.pos += 1
            right = self.term()
            span = new_span(Span, (left.span[0], right.span[1]))
            left = ast.Binary("+" if op[0] is _PLUS else "-", left, right, span, op[2])
        return left

    def term(self) -> ast.Expr:
        """Rule ``term``, with :meth:`operand`'s fast path for a bare number or name written out (no call)."""
        pieces = self.pieces
        left = self.operand()
        pos = self.pos
        while (op := pieces[pos])[0] in _MUL_OPS:
            token = pieces[pos + 1]
            right: ast.Expr
            if token[0] is _NAME and pieces[pos + 2][0] in _LEAF_FOLLOWERS:
                right = ast.Name(token[1], token[2])
                pos += 2
            elif token[0] is _NUMBER and pieces[pos + 2][0] in _LEAF_FOLLOWERS:
                right = ast.Number(token[4], token[1], token[2])
                pos += 2
            else:
                self.pos = pos + 1
                right = self.unary()
                pos = self.pos
            span = new_span(Span, (left.span[0], right.span[1]))
            left = ast.Binary("/" if op[0] is _SLASH else "*", left, right, span, op[2])
        self.pos = pos
        return left

    def operand(self) -> ast.Expr:
        """Rule ``unary``, with the parser's fast path for a bare number or name (by far the commonest)."""
        pieces, pos = self.pieces, self.pos
        token = pieces[pos]
        if pieces[pos + 1][0] in _LEAF_FOLLOWERS:
            if token[0] is _NAME:
                self.pos = pos + 1
                return ast.Name(token[1], token[2])
            if token[0] is _NUMBER:
                self.pos = pos + 1
                return ast.Number(token[4], token[1], token[2])
        return self.unary()

    def unary(self) -> ast.Expr:
        """Rule ``unary``."""
        sign = self.pieces[self.pos]
        if sign[0] in _ADD_OPS:
            self.pos += 1
            self.deeper()
            operand = self.unary()
            self.depth -= 1
            return ast.Unary(sign[0].value, operand, new_span(Span, (sign[2][0], operand.span[1])))
        return self.with_unit()

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise NotPlain

    def with_unit(self) -> ast.Expr:
        """Rule ``with_unit``: a unit after a number, ``)`` or (two letters or more) a name."""
        operand = self.postfix()
        pieces, pos = self.pieces, self.pos
        previous, following = pieces[pos - 1], pieces[pos]
        kind = following[0]
        if kind is _PERCENT:
            if previous[0] is _NUMBER or previous[0] is _RPAREN:
                unit = self.unit(require_known=True)
                return ast.WithUnit(operand, unit, new_span(Span, (operand.span[0], unit.span[1])))
        elif kind is _NAME:
            after_value = previous[0] is _NUMBER or previous[0] is _RPAREN
            if (after_value or (previous[0] is _NAME and len(following[1]) > 1 and self.is_unit(following[1]))) and (
                pieces[pos + 1][0] not in _NOT_A_UNIT_AFTER
            ):
                unit = self.unit(require_known=True)
                return ast.WithUnit(operand, unit, new_span(Span, (operand.span[0], unit.span[1])))
            raise NotPlain  # a name no rule reads here: an error, or `8 x 128` (the lexer's `x`)
        return operand

    def postfix(self) -> ast.Expr:
        """Rules ``postfix`` and ``primary``: a number, a name or a parenthesised expression, then fields."""
        pieces = self.pieces
        token = pieces[self.pos]
        kind = token[0]
        expr: ast.Expr
        if kind is _NAME:
            self.pos += 1
            expr = ast.Name(token[1], token[2])
            if pieces[self.pos][0] is _LPAREN:
                raise NotPlain  # a call
        elif kind is _NUMBER:
            self.pos += 1
            expr = ast.Number(token[4], token[1], token[2])
        elif kind is _LPAREN:
            self.pos += 1
            self.deeper()
            inner = self.expression()
            self.depth -= 1
            unit = self.convert()
            closing = pieces[self.pos]
            if closing[0] is not _RPAREN:
                raise NotPlain
            self.pos += 1
            span = new_span(Span, (token[2][0], closing[2][1]))
            expr = ast.Convert(inner, unit, span) if unit is not None else replace(inner, span=span)
        else:
            raise NotPlain
        while pieces[self.pos][0] is _DOT:
            name = pieces[self.pos + 1]
            if name[0] is not _NAME:
                raise NotPlain
            self.pos += 2
            expr = ast.Field(expr, name[1], new_span(Span, (expr.span[0], name[2][1])), name[2])
        if pieces[self.pos][0] is _LPAREN:
            raise NotPlain  # `(a)(b)`, `a.b(c)`: a parse error or a call
        return expr

    def convert(self) -> ast.UnitExpr | None:
        """Rule ``convert``: an optional ``-> unit``."""
        if self.pieces[self.pos][0] is not TokenKind.ARROW:
            return None
        self.pos += 1
        if self.pieces[self.pos][0] not in _UNIT_STARTS:
            raise NotPlain
        return self.unit(require_known=False)

    def tolerance(self) -> ast.Tolerance | None:
        """Rule ``tolerance``: an optional ``± tol``."""
        sign = self.pieces[self.pos]
        if sign[0] is not TokenKind.PLUSMINUS:
            return None
        self.pos += 1
        expr = self.expression()
        return tolerance_of(Span(sign[2][0], self.pieces[self.pos - 1][2][1]), expr)

    def unit(self, *, require_known: bool) -> ast.UnitExpr:
        """Rule ``unit``: factors joined by ``/`` or ``·`` written without spaces (exponents are never plain)."""
        pieces = self.pieces
        factors = [self.unit_factor(1, require_known)]
        while (joiner := pieces[self.pos])[0] in _UNIT_JOINERS and not joiner[3]:
            following = pieces[self.pos + 1]
            if following[3] or following[0] not in _UNIT_STARTS:
                break
            if require_known and not self.is_unit(following[1]):
                break
            self.pos += 1
            factors.append(self.unit_factor(-1 if joiner[0] is _SLASH else 1, require_known))
        return ast.UnitExpr(tuple(factors), new_span(Span, (factors[0].span[0], factors[-1].span[1])))

    def unit_factor(self, sign: int, require_known: bool) -> ast.UnitFactor:
        """Rule ``factor`` of a unit, without an exponent."""
        token = self.pieces[self.pos]
        self.pos += 1
        if require_known and token[0] is _NAME and not self.is_unit(token[1]):
            raise NotPlain  # N002, an unknown unit: the parser reports it
        return ast.UnitFactor(token[1], sign, token[2])
