"""The token cursor the calc-language parser reads from, and the grammar of units and tolerances.

Grammar rules read here (the rest is in :mod:`scaling_core.expr.parser`)::

    convert    = ("->" | "→") unit
    tolerance  = ("±" | "+-") expr            # "5%" is relative, "2 ms" absolute
    unit       = factor (("/" | "·") factor)*  # "/" and "·" written without spaces
    factor     = (UNIT | "%") [("^" | "**") ["-"] NUMBER | SUPERSCRIPT]

:class:`TokenCursor` moves over one token list and builds S001 errors at the
cursor; :class:`UnitGrammar` adds the unit rules, which need only the cursor
and the expression rule the parser provides.
"""

from __future__ import annotations

from collections.abc import Callable

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.expr import syntax as ast
from scaling_core.expr.tokens import Token, TokenKind
from scaling_core.text import Span, new_span
from scaling_core.units.dimension import MAX_EXPONENT

#: How deep groups, signs and powers may nest before a statement is refused (E003).
MAX_DEPTH = 64
_UNIT_JOINERS = (TokenKind.SLASH, TokenKind.MIDDOT)


class ParseError(Exception):
    """A statement that does not parse: its one diagnostic (S001, N002 or E003)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class TokenCursor:
    """A cursor over one token list (ending with an end-of-input token) and the nesting depth of the rule read."""

    def __init__(self, tokens: list[Token], is_unit: Callable[[str], bool]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.is_unit = is_unit
        self.depth = 0

    # -- token helpers -------------------------------------------------------
    @property
    def current(self) -> Token:
        """The token at the cursor."""
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        """The token ``ahead`` places after the cursor."""
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """Consume and return the current token."""
        token = self.tokens[self.pos]
        if token.kind is not TokenKind.EOF:
            self.pos += 1
        return token

    def at(self, *kinds: TokenKind) -> bool:
        """Whether the current token is of one of ``kinds``."""
        return self.tokens[self.pos].kind in kinds

    def expect(self, kind: TokenKind, what: str) -> Token:
        """Consume a token of ``kind`` or fail with 'expected …'."""
        if self.current.kind is not kind:
            raise self.error(f"expected {what}, found {self.describe(self.current)}")
        return self.advance()

    def error(self, message: str, span: Span | None = None) -> ParseError:
        """An S001 parse error at the current token (or ``span``)."""
        return ParseError(make_diagnostic("S001", message, span or self.current.span))

    @staticmethod
    def describe(token: Token) -> str:
        """A token as named in messages."""
        if token.kind in (TokenKind.EOF, TokenKind.NEWLINE):
            return str(token.kind.value)
        return f"'{token.text}'"

    def at_statement_end(self) -> bool:
        """Whether the statement ends here (line end or input end)."""
        kind = self.tokens[self.pos].kind
        return kind is TokenKind.NEWLINE or kind is TokenKind.EOF

    def last_end(self) -> int:
        """The end offset of the last consumed token."""
        return self.tokens[self.pos - 1].span.end if self.pos else self.current.span.start

    def deeper(self, span: Span) -> None:
        """Enter one more level of nesting (a group, a unary sign, a power): E003 beyond :data:`MAX_DEPTH`."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ParseError(make_diagnostic("E003", f"expression nested more than {MAX_DEPTH} deep", span))


class UnitGrammar(TokenCursor):
    """The rules ``convert``, ``tolerance``, ``unit`` and ``factor``; ``expression`` is the parser's."""

    def expression(self) -> ast.Expr:
        """Grammar rule ``expr`` (see :class:`scaling_core.expr.parser.Parser`)."""
        raise NotImplementedError

    def convert(self) -> ast.UnitExpr | None:
        """Grammar rule ``convert``: an optional ``-> unit``."""
        if self.tokens[self.pos].kind is not TokenKind.ARROW:  # the commonest answer, without at() (hot path)
            return None
        self.advance()
        if not self.at(TokenKind.IDENT, TokenKind.PERCENT):
            raise self.error(f"expected a unit after '->', found {self.describe(self.current)}")
        return self.unit(require_known=False)

    def tolerance(self) -> ast.Tolerance | None:
        """Grammar rule ``tolerance``: an optional ``± tol``."""
        if self.tokens[self.pos].kind is not TokenKind.PLUSMINUS:
            return None
        start = self.advance().span.start
        expr = self.expression()
        return tolerance_of(Span(start, self.last_end()), expr)

    def unit(self, *, require_known: bool) -> ast.UnitExpr:
        """Grammar rule ``unit``."""
        factors = [self.unit_factor(1, require_known)]
        while (token := self.tokens[self.pos]).kind in _UNIT_JOINERS and not token.spaced:
            following = self.peek()
            if following.spaced or following.kind not in (TokenKind.IDENT, TokenKind.PERCENT):
                break
            if require_known and not self.is_unit(following.text):
                break
            sign = -1 if self.advance().kind is TokenKind.SLASH else 1
            factors.append(self.unit_factor(sign, require_known))
        return ast.UnitExpr(tuple(factors), new_span(Span, (factors[0].span.start, factors[-1].span.end)))

    def unit_factor(self, sign: int, require_known: bool) -> ast.UnitFactor:
        """Grammar rule ``factor`` of a unit."""
        token = self.advance()
        if require_known and token.kind is TokenKind.IDENT and not self.is_unit(token.text):
            raise ParseError(_unknown_unit(token))
        exponent = 1
        kind = self.tokens[self.pos].kind
        if kind is TokenKind.SUPERSCRIPT:
            sup = self.advance()
            if abs(sup.value) > MAX_EXPONENT:  # `s⁹⁹⁹⁹…`: its value may be infinite
                raise ParseError(make_diagnostic("E003", f"a unit exponent beyond ±{MAX_EXPONENT}", sup.span))
            exponent = int(sup.value)
        elif kind is TokenKind.POWER and self.peek().kind in (TokenKind.NUMBER, TokenKind.MINUS):
            self.advance()
            negative = self.at(TokenKind.MINUS) and bool(self.advance())
            number = self.expect(TokenKind.NUMBER, "an integer exponent")
            if abs(number.value) > MAX_EXPONENT:
                raise ParseError(make_diagnostic("E003", f"a unit exponent beyond ±{MAX_EXPONENT}", number.span))
            if not number.value.is_integer():
                raise self.error("a unit exponent must be an integer", number.span)
            exponent = -int(number.value) if negative else int(number.value)
        end = self.tokens[self.pos - 1].span.end
        return ast.UnitFactor(token.text, sign * exponent, new_span(Span, (token.span.start, end)))


def _unknown_unit(token: Token) -> Diagnostic:
    # The did-you-mean is added by the interpreter, which owns the registry (the spelling is the span's text).
    return make_diagnostic("N002", f"unknown unit '{token.text}' after a number", token.span)


def tolerance_of(span: Span, expr: ast.Expr) -> ast.Tolerance:
    """The tolerance ``± expr`` written at ``span``: relative when ``expr`` is a bare number of percent."""
    if isinstance(expr, ast.WithUnit) and isinstance(expr.operand, ast.Number):
        factors = expr.unit.factors
        if len(factors) == 1 and factors[0].spelling in ("%", "percent") and factors[0].exponent == 1:
            return ast.Tolerance(span, relative=expr.operand.value / 100)
    return ast.Tolerance(span, absolute=expr)
