"""The calc-language parser: tokens -> statements plus diagnostics, with recovery.

Grammar (one statement per line; newlines inside brackets are ignored)::

    statement  = import | definition | show | check
    import     = "import" STRING
    definition = NAME "=" expr [convert]
    show       = expr [convert]
    check      = expr COMPARE expr [tolerance]
    convert    = ("->" | "→") unit
    tolerance  = ("±" | "+-") expr            # "5%" is relative, "2 ms" absolute
    expr       = term (("+" | "-") term)*
    term       = unary (("*" | "×" | "/" | "÷") unary)*
    unary      = ("-" | "+") unary | with_unit
    with_unit  = power [unit]                  # a unit only after a number, ")" or "]"
    power      = postfix [("**" | "^") exponent | SUPERSCRIPT]
    exponent   = ("-" | "+") exponent | power
    postfix    = primary ("." NAME | "(" [args] ")" | "[" STRING "]")*   # chip["4x4x4"]: a slice
    primary    = NUMBER | NAME | DTYPE "[" args "]" | "(" expr [convert] ")" | "[" [args] "]"
    args       = expr ("," expr)* [","]
    unit       = factor (("/" | "·") factor)*  # "/" and "·" written without spaces
    factor     = (UNIT | "%") [("^" | "**") ["-"] NUMBER | SUPERSCRIPT]
    COMPARE    = "≈" | "~=" | "==" | "<" | "<=" | ">" | ">=" | "≤" | "≥"

A statement that fails to parse yields one S001 diagnostic at the offending
token and parsing resumes at the next line, so one typo hides nothing else.
The token cursor and the rules ``convert``, ``tolerance``, ``unit`` and
``factor`` are in :mod:`scaling_core.expr.unit_grammar`.
Code spans are split into links by :mod:`scaling_core.expr.chain`, each parsed as a claim expression.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from scaling_core.diagnostics import Diagnostic
from scaling_core.expr import syntax as ast
from scaling_core.expr.tokens import Token, TokenKind, canonical_comparison
from scaling_core.expr.unit_grammar import MAX_DEPTH, ParseError, UnitGrammar
from scaling_core.text import Span, new_span

#: Dtype names accepted in shape literals, with their size in bytes.
DTYPE_BYTES: dict[str, float] = {
    "f64": 8, "fp64": 8, "float64": 8,
    "f32": 4, "fp32": 4, "float32": 4, "tf32": 4, "int32": 4, "i32": 4,
    "bf16": 2, "bfloat16": 2, "f16": 2, "fp16": 2, "float16": 2, "int16": 2,
    "fp8": 1, "f8": 1, "e4m3": 1, "e5m2": 1, "int8": 1, "i8": 1, "uint8": 1,
    "int4": 0.5, "i4": 0.5, "fp4": 0.5, "nf4": 0.5,
}  # fmt: skip

_UNIT_FOLLOWERS = (TokenKind.NUMBER, TokenKind.RPAREN, TokenKind.RBRACKET)
_LEAVES = (TokenKind.NUMBER, TokenKind.IDENT)
_ADD_OPS = (TokenKind.PLUS, TokenKind.MINUS)
_MUL_OPS = (TokenKind.STAR, TokenKind.SLASH, TokenKind.MIDDOT)
#: Tokens after which a number or name is complete (no unit, power, call or field).
_LEAF_FOLLOWERS = (
    TokenKind.PLUS, TokenKind.MINUS, TokenKind.STAR, TokenKind.SLASH, TokenKind.MIDDOT, TokenKind.COMMA,
    TokenKind.RPAREN, TokenKind.RBRACKET, TokenKind.NEWLINE, TokenKind.EOF, TokenKind.COMPARE,
    TokenKind.ASSIGN, TokenKind.ARROW, TokenKind.PLUSMINUS,
)  # fmt: skip


class Parser(UnitGrammar):
    """Recursive-descent parser over one token list: statements and expressions."""

    # -- statements ----------------------------------------------------------
    def statements(self) -> tuple[list[ast.Statement], list[Diagnostic]]:
        """Parse every statement, recovering at line ends."""
        statements: list[ast.Statement] = []
        diagnostics: list[Diagnostic] = []
        tokens = self.tokens
        while (kind := tokens[self.pos].kind) is not TokenKind.EOF:
            if kind is TokenKind.NEWLINE:
                self.advance()
                continue
            self.depth = 0
            try:
                statements.append(self.statement())
                if not self.at_statement_end():
                    raise self.error(f"unexpected {self.describe(self.current)} after the statement")
            except ParseError as failure:
                diagnostics.append(failure.diagnostic)
                while not self.at_statement_end():
                    self.advance()
        return statements, diagnostics

    def statement(self) -> ast.Statement:
        """Grammar rule ``statement`` (never called at a line end or the end of input: a token follows)."""
        tokens, pos = self.tokens, self.pos
        first = tokens[pos]
        start = first.span.start
        following = tokens[pos + 1].kind if first.kind is TokenKind.IDENT else None
        if following is TokenKind.STRING and first.text == "import":
            self.advance()
            path = self.advance()
            return ast.Import(path.text, Span(start, path.span.end), path.span)
        if following is TokenKind.ASSIGN:
            self.pos = pos + 2
            expr = self.expression()
            convert = self.convert()
            return ast.Definition(first.text, first.span, expr, convert, new_span(Span, (start, self.last_end())))
        left = self.expression()
        if self.tokens[self.pos].kind is TokenKind.COMPARE:
            op = self.advance()
            right = self.expression()
            tolerance = self.tolerance()
            return ast.Check(
                left,
                canonical_comparison(op.text),
                right,
                tolerance,
                new_span(Span, (start, self.last_end())),
                op.span,
            )
        if self.tokens[self.pos].kind is TokenKind.ASSIGN:
            raise self.error("'=' defines a name; to check a value write '==' or '≈'")
        convert = self.convert()
        return ast.Show(left, convert, new_span(Span, (start, self.last_end())))

    # -- expressions ---------------------------------------------------------
    def expression(self) -> ast.Expr:
        """Grammar rule ``expr`` (bounded nesting)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:  # as deeper(), inline (hot path)
            self.depth -= 1
            self.deeper(self.tokens[self.pos].span)
        try:
            left = self.term()
            while self.tokens[self.pos].kind in _ADD_OPS:
                op = self.advance()
                right = self.term()
                left = ast.Binary(
                    op.kind.value, left, right, new_span(Span, (left.span.start, right.span.end)), op.span
                )
            return left
        finally:
            self.depth -= 1

    def term(self) -> ast.Expr:
        """Grammar rule ``term``."""
        left = self.unary()
        while self.tokens[self.pos].kind in _MUL_OPS:
            op = self.tokens[self.pos]  # not the end of input: advanced past without advance() (hot path)
            self.pos += 1
            symbol = "/" if op.kind is TokenKind.SLASH else "*"
            right = self.unary()
            left = ast.Binary(symbol, left, right, new_span(Span, (left.span.start, right.span.end)), op.span)
        return left

    def unary(self) -> ast.Expr:
        """Grammar rule ``unary``, with a fast path for a bare number or name."""
        token = self.tokens[self.pos]
        if token.kind in _LEAVES and self.tokens[self.pos + 1].kind in _LEAF_FOLLOWERS:
            # Fast path for a bare number or name, by far the commonest operand.
            self.pos += 1
            if token.kind is TokenKind.NUMBER:
                return ast.Number(token.value, token.text, token.span)
            return ast.Name(token.text, token.span)
        if token.kind in _ADD_OPS:
            op = self.advance()
            self.deeper(op.span)
            try:
                operand = self.unary()
            finally:
                self.depth -= 1
            return ast.Unary(op.kind.value, operand, new_span(Span, (op.span.start, operand.span.end)))
        return self.with_unit()

    def with_unit(self) -> ast.Expr:
        """Grammar rule ``with_unit``: a unit after a number, ``)``, ``]`` or a name."""
        operand = self.power()
        previous = self.tokens[self.pos - 1]
        following = self.tokens[self.pos]
        after_value = previous.kind in _UNIT_FOLLOWERS
        # After a name only a unit of two or more letters counts (`D * F byte`):
        # single letters such as B, W, K, A are the book's variables.
        after_name = previous.kind is TokenKind.IDENT and len(following.text) > 1 and self.is_unit(following.text)
        if (after_value or after_name) and (
            following.kind is TokenKind.PERCENT or (following.kind is TokenKind.IDENT and self.starts_unit())
        ):
            unit = self.unit(require_known=True)
            return ast.WithUnit(operand, unit, new_span(Span, (operand.span.start, unit.span.end)))
        if following.kind is TokenKind.IDENT and self.is_unit(following.text) and self.peek().kind in _LEAF_FOLLOWERS:
            raise self.error(
                f"'{following.text}' is a unit: write it after a number ('1 {following.text}') or multiply by one"
            )
        return operand

    def starts_unit(self) -> bool:
        """An identifier right after a number is a unit unless it opens a call or field."""
        return self.peek().kind not in (TokenKind.LPAREN, TokenKind.DOT, TokenKind.LBRACKET)

    def power(self) -> ast.Expr:
        """Grammar rule ``power``."""
        base = self.postfix()
        kind = self.tokens[self.pos].kind
        if kind is TokenKind.POWER:
            op = self.advance()
            self.deeper(op.span)  # `2 ** 2 ** 2 …` nests to the right (a failed statement resets the depth)
            exponent = self.exponent()
            self.depth -= 1
            return ast.Binary("**", base, exponent, new_span(Span, (base.span.start, exponent.span.end)), op.span)
        if kind is TokenKind.SUPERSCRIPT:
            sup = self.advance()
            exponent = ast.Number(sup.value, sup.text, sup.span)
            return ast.Binary("**", base, exponent, new_span(Span, (base.span.start, sup.span.end)), sup.span)
        return base

    def exponent(self) -> ast.Expr:
        """Grammar rule ``exponent`` (no units inside an exponent)."""
        if self.at(TokenKind.MINUS, TokenKind.PLUS):
            op = self.advance()
            self.deeper(op.span)
            operand = self.exponent()
            self.depth -= 1
            return ast.Unary(op.kind.value, operand, Span(op.span.start, operand.span.end))
        return self.power()

    def postfix(self) -> ast.Expr:
        """Grammar rule ``postfix``: fields and calls."""
        expr = self.primary()
        while True:
            kind = self.tokens[self.pos].kind
            if kind is TokenKind.DOT and self.peek().kind is TokenKind.IDENT:
                self.advance()
                name = self.advance()
                expr = ast.Field(expr, name.text, Span(expr.span.start, name.span.end), name.span)
            elif kind is TokenKind.LPAREN and isinstance(expr, ast.Name):
                self.advance()
                args = self.arguments(TokenKind.RPAREN, "')'")
                expr = ast.Call(expr.name, args, Span(expr.span.start, self.last_end()), expr.span)
            elif kind is TokenKind.LBRACKET and self.peek().kind is TokenKind.STRING:
                self.advance()
                key = self.advance()
                self.expect(TokenKind.RBRACKET, "']'")
                expr = ast.Index(expr, key.text, Span(expr.span.start, self.last_end()), key.span)
            else:
                return expr

    def arguments(self, closer: TokenKind, what: str) -> tuple[ast.Expr, ...]:
        """Grammar rule ``args`` up to ``closer``."""
        args: list[ast.Expr] = []
        while not self.at(closer):
            args.append(self.expression())
            if not self.at(TokenKind.COMMA):
                break
            self.advance()
        self.expect(closer, what)
        return tuple(args)

    def primary(self) -> ast.Expr:
        """Grammar rule ``primary``."""
        token = self.tokens[self.pos]
        if token.kind is TokenKind.NUMBER:
            self.advance()
            return ast.Number(token.value, token.text, token.span)
        if token.kind is TokenKind.IDENT:
            self.advance()
            if token.text in DTYPE_BYTES and self.at(TokenKind.LBRACKET):
                self.advance()
                dims = self.arguments(TokenKind.RBRACKET, "']'")
                return ast.Shape(token.text, dims, Span(token.span.start, self.last_end()))
            return ast.Name(token.text, token.span)
        if token.kind is TokenKind.LPAREN:
            self.advance()
            inner = self.expression()
            unit = self.convert()  # `(1 GiB -> GB)`: a conversion inside parentheses
            closing = self.expect(TokenKind.RPAREN, "')'")
            if unit is not None:
                return ast.Convert(inner, unit, Span(token.span.start, closing.span.end))
            return replace(inner, span=Span(token.span.start, closing.span.end))
        if token.kind is TokenKind.LBRACKET:
            self.advance()
            items = self.arguments(TokenKind.RBRACKET, "']'")
            return ast.ListExpr(items, Span(token.span.start, self.last_end()))
        raise self.error(f"expected a number, name or '(', found {self.describe(token)}")


def parse_statements(
    tokens: list[Token], is_unit: Callable[[str], bool]
) -> tuple[list[ast.Statement], list[Diagnostic]]:
    """Parse a calc block's tokens into statements, with per-line recovery."""
    return Parser(tokens, is_unit).statements()


def parse_claim_expression(
    tokens: list[Token], is_unit: Callable[[str], bool]
) -> tuple[ast.Expr | None, ast.Tolerance | None, Diagnostic | None]:
    """Parse the expression of a claim marker: ``expr [-> unit] [± tol]``.

    A conversion (``6 * N * D -> FLOP``) is read as ``(6 * N * D -> FLOP)``: it gives
    an unannotated count its unit and fails (U002) when the dimensions differ.
    """
    parser = Parser(tokens, is_unit)
    try:
        expr = parser.expression()
        unit = parser.convert()
        if unit is not None:
            expr = ast.Convert(expr, unit, Span(expr.span.start, unit.span.end))
        tolerance = parser.tolerance()
        if not parser.at(TokenKind.EOF):
            raise parser.error(f"unexpected {parser.describe(parser.current)} in the claim")
    except ParseError as failure:
        return None, None, failure.diagnostic
    return expr, tolerance, None
