"""Parse results reused within one analysis: a text read once is not lexed and parsed again.

A draft repeats itself: the same code span (``2 * 8192 * 32768 = 5.4e8``) in
every section, the same claim expression, the same calc block in every
problem.  :class:`ParseMemo` keeps what the lexer and parser made of each
text with the offset it was read at; the same text elsewhere gets a copy of
those trees moved there (:func:`rebased`), a fraction of the cost of lexing
and parsing it again.  Trees are immutable, so at the same offset the copy is
the tree itself.  The result is exactly what reading the text again gives:
what the lexer and parser produce depends on the text alone (and on the unit
registry, fixed for an analysis).  A text read for the first time is read
straight into trees when its lines are plain (:mod:`scaling_core.expr.plain_lines`),
else lexed and parsed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import islice
from typing import Any, ClassVar

from scaling_core.diagnostics import Diagnostic, Fix, Related
from scaling_core.expr import chain
from scaling_core.expr import syntax as ast
from scaling_core.expr.chain import Equation
from scaling_core.expr.lexer import tokenize, tokenize_lines
from scaling_core.expr.parser import parse_claim_expression, parse_statements
from scaling_core.expr.plain_lines import read_plain_block, read_plain_claim, read_plain_text
from scaling_core.text import Span, new_span

#: Texts longer than this are read afresh each time (long blocks seldom repeat; it bounds the memo's memory).
MAX_TEXT = 2_000
#: A module variable, not an import, so that mypyc looks it up at each call (tests count the reads).
read_code_span = chain.read_code_span
#: Entries kept per kind of text (a 50 MB draft has millions of code spans).
MAX_ENTRIES = 8_192
#: Calc blocks kept: each holds a block's statements (~10 KB); 8,192 of them took ~40 MB at the peak of a
#: 5 MB draft's first analysis, a fifth of it, for no measurable speed (the same block seldom repeats far apart).
MAX_BLOCKS = 512
#: Entries :func:`_forget` drops between two offers of the interpreter lock to another thread.
FORGET_BETWEEN_YIELDS = 256

#: A claim expression read: the lexer's problems, the expression, its tolerance, the parser's problem.
Claim = tuple[list[Diagnostic], ast.Expr | None, ast.Tolerance | None, Diagnostic | None]
#: Statements read: the lexer's problems, the statements, the parser's problems.
Statements = tuple[list[Diagnostic], list[ast.Statement], list[Diagnostic]]


class ParseMemo:
    """What the lexer and parser made of each text this analysis read, by text."""

    #: Whether plain calc lines are read straight into trees (``plain_lines.py``); tests turn it off to compare.
    plain_lines: ClassVar[bool] = True  # ClassVar: compiled, a plain attribute would ignore a patch of the class

    def __init__(self, is_unit: Callable[[str], bool]) -> None:
        self.is_unit = is_unit
        self._spans: dict[str, tuple[int, list[Equation]]] = {}
        self._claims: dict[str, tuple[int, Claim]] = {}
        self._inline_memo: dict[str, tuple[int, Statements]] = {}
        self._blocks: dict[tuple[Any, ...], tuple[int, Statements]] = {}

    def forget(self) -> None:
        """Empty the memo one entry at a time (a whole one freed at once holds the interpreter lock: see :func:`_keep`)."""
        for memo in (self._spans, self._claims, self._inline_memo, self._blocks):
            _forget(memo, len(memo))

    def code_span(self, text: str, base: int) -> tuple[list[Equation], int]:
        """:func:`~scaling_core.expr.chain.read_code_span` of ``text``, as first read in this analysis, and how far
        ``base`` lies from where it was read (the caller moves what it finds by that much, not the trees)."""
        known = self._spans.get(text)
        if known is not None:
            return known[1], base - known[0]
        equations = read_code_span(text, base, self.is_unit, plain=self.plain_lines)
        _keep(self._spans, text, (base, equations))
        return equations, 0

    def claim(self, text: str, base: int) -> Claim:
        """A claim marker's expression ``text`` (at ``base``) lexed and parsed, with the problems of each step."""
        known = self._claims.get(text)
        if known is not None:
            delta = base - known[0]
            if not delta:
                return known[1]
            problems, expr, tolerance, problem = known[1]
            return (_diagnostics(problems, delta), rebased(expr, delta), rebased(tolerance, delta),
                    None if problem is None else _diagnostic(problem, delta))  # fmt: skip
        plain = read_plain_claim(text, base, self.is_unit) if self.plain_lines else None
        claim: Claim
        if plain is not None:
            claim = ([], plain[0], plain[1], None)
        else:
            tokens, problems = tokenize(text, base)
            claim = (problems, *parse_claim_expression(tokens, self.is_unit))
        _keep(self._claims, text, (base, claim))
        return claim

    def inline(self, text: str, base: int) -> Statements:
        """A ``{calc}`` role's ``text`` (at ``base``) read as statements."""
        known = self._inline_memo.get(text)
        if known is not None:
            return _statements(known[1], base - known[0])
        plain = read_plain_text(text, base, self.is_unit) if self.plain_lines else None
        if plain is not None:
            statements: Statements = ([], plain, [])
        else:
            tokens, problems = tokenize(text, base)
            statements = (problems, *parse_statements(tokens, self.is_unit))
        _keep(self._inline_memo, text, (base, statements))
        return statements

    def block(
        self, text: str, lines: Sequence[tuple[int, str]], end: int,
        following: int | None = None, contiguous: bool | None = None,
    ) -> Statements:  # fmt: skip
        """The statements of a calc block's ``lines`` (see :func:`~scaling_core.expr.lexer.tokenize_lines`)."""
        first = lines[0][0] if lines else end
        key: tuple[Any, ...] | None = None
        if lines and lines[-1][0] - first + len(lines[-1][1]) <= MAX_TEXT:
            # The lines with their offsets from the first: what the tokens depend on (the breaks between
            # contiguous lines are line-break characters, each read as the same end of line).
            key = (tuple([(offset - first, line) for offset, line in lines]), end - first,
                   None if following is None else following - first, contiguous)  # fmt: skip
            known = self._blocks.get(key)
            if known is not None:
                return _statements(known[1], first - known[0])
        plain = (
            read_plain_block(text, lines, following=following, contiguous=contiguous, is_unit=self.is_unit)
            if self.plain_lines else None
        )  # fmt: skip
        if plain is not None:
            statements: Statements = ([], plain, [])
        else:
            tokens, problems = tokenize_lines(text, lines, end, following=following, contiguous=contiguous)
            statements = (problems, *parse_statements(tokens, self.is_unit))
        if key is not None:
            _keep(self._blocks, key, (first, statements), MAX_BLOCKS)
        return statements


def _keep(memo: dict[Any, Any], key: Any, entry: Any, limit: int | None = None) -> None:
    """Remember ``entry`` (not for a long text); a memo holding ``limit`` entries (:data:`MAX_ENTRIES` by default)
    forgets its oldest eighth first.

    One entry at a time, so that the interpreter lock can pass to another
    thread between them: clearing a full memo at once was one cascade of
    deallocations (measured: 53 ms in the first analysis of a 20 MB draft,
    during which the language server's event loop could not run).
    """
    if isinstance(key, str) and len(key) > MAX_TEXT:
        return
    if limit is None:
        limit = MAX_ENTRIES
    if len(memo) >= limit:
        _forget(memo, max(1, limit // 8))
    memo[key] = entry


def _forget(memo: dict[Any, Any], count: int) -> None:
    """Drop the ``count`` oldest entries of ``memo``, one at a time, offering the interpreter lock now and then.

    Python offers the lock to a waiting thread between bytecodes; compiled
    (docs/cli.md, "A compiled engine") this loop runs none, and it held the
    lock for 90 ms after the first analysis of a 20 MB draft, so every
    :data:`FORGET_BETWEEN_YIELDS` entries ``time.sleep(0)`` offers it.
    """
    for number, old in enumerate(list(islice(memo, count)), 1):
        del memo[old]
        if not number % FORGET_BETWEEN_YIELDS:
            time.sleep(0)


# -- moving trees ------------------------------------------------------------------
def rebased(node: Any, delta: int) -> Any:
    """A syntax tree (an expression, unit, tolerance or statement) with every span moved by ``delta``."""
    if node is None or not delta:
        return node
    return _MOVE[type(node)](node, delta)


def _span(span: Span, delta: int) -> Span:
    return new_span(Span, (span[0] + delta, span[1] + delta))


def _unit(node: ast.UnitExpr, delta: int) -> ast.UnitExpr:
    factors = tuple([ast.UnitFactor(f.spelling, f.exponent, _span(f.span, delta)) for f in node.factors])
    return ast.UnitExpr(factors, _span(node.span, delta))


def _binary(node: ast.Binary, delta: int) -> ast.Expr:
    # A flat chain (`1 + 2 + … + 5000`) nests to the left: walk down it in a loop, not by recursion.
    spine = [node]
    leftmost: ast.Expr = node.left
    while type(leftmost) is ast.Binary:
        spine.append(leftmost)
        leftmost = leftmost.left
    moved: ast.Expr = _MOVE[type(leftmost)](leftmost, delta)
    for step in reversed(spine):
        right = step.right
        if type(right) is ast.Name:  # the commonest operands, moved inline (hot path)
            right = ast.Name(right.name, new_span(Span, (right.span[0] + delta, right.span[1] + delta)))
        elif type(right) is ast.Number:
            right = ast.Number(right.value, right.text, new_span(Span, (right.span[0] + delta, right.span[1] + delta)))
        else:
            right = _MOVE[type(right)](right, delta)
        at, op = step.span, step.op_span
        moved = ast.Binary(step.op, moved, right, new_span(Span, (at[0] + delta, at[1] + delta)),
                           new_span(Span, (op[0] + delta, op[1] + delta)))  # fmt: skip
    return moved


def _exprs(items: tuple[ast.Expr, ...], delta: int) -> tuple[ast.Expr, ...]:
    return tuple([_MOVE[type(item)](item, delta) for item in items])


def _tolerance(node: ast.Tolerance, delta: int) -> ast.Tolerance:
    return ast.Tolerance(_span(node.span, delta), node.relative, rebased(node.absolute, delta))


_MOVE: dict[type, Callable[[Any, int], Any]] = {
    ast.Number: lambda n, d: ast.Number(n.value, n.text, new_span(Span, (n.span[0] + d, n.span[1] + d))),
    ast.Name: lambda n, d: ast.Name(n.name, new_span(Span, (n.span[0] + d, n.span[1] + d))),
    ast.WithUnit: lambda n, d: ast.WithUnit(rebased(n.operand, d), _unit(n.unit, d), _span(n.span, d)),
    ast.Convert: lambda n, d: ast.Convert(rebased(n.operand, d), _unit(n.unit, d), _span(n.span, d)),
    ast.Unary: lambda n, d: ast.Unary(n.op, rebased(n.operand, d), _span(n.span, d)),
    ast.Binary: _binary,
    ast.Call: lambda n, d: ast.Call(n.name, _exprs(n.args, d), _span(n.span, d), _span(n.name_span, d)),
    ast.Field: lambda n, d: ast.Field(rebased(n.target, d), n.name, _span(n.span, d), _span(n.name_span, d)),
    ast.Index: lambda n, d: ast.Index(rebased(n.target, d), n.key, _span(n.span, d), _span(n.key_span, d)),
    ast.ListExpr: lambda n, d: ast.ListExpr(_exprs(n.items, d), _span(n.span, d)),
    ast.Shape: lambda n, d: ast.Shape(n.dtype, _exprs(n.dims, d), _span(n.span, d)),
    ast.UnitExpr: _unit,
    ast.Tolerance: _tolerance,
    ast.Definition: lambda n, d: ast.Definition(
        n.name, _span(n.name_span, d), rebased(n.expr, d), rebased(n.convert, d), _span(n.span, d)
    ),
    ast.Show: lambda n, d: ast.Show(rebased(n.expr, d), rebased(n.convert, d), _span(n.span, d)),
    ast.Check: lambda n, d: ast.Check(
        rebased(n.left, d), n.op, rebased(n.right, d), rebased(n.tolerance, d), _span(n.span, d), _span(n.op_span, d)
    ),
    ast.Import: lambda n, d: ast.Import(n.path, _span(n.span, d), _span(n.path_span, d)),
}


def _statements(read: Statements, delta: int) -> Statements:
    if not delta:
        return read
    problems, statements, parse_problems = read
    moved = [_MOVE[type(statement)](statement, delta) for statement in statements]
    return _diagnostics(problems, delta), moved, _diagnostics(parse_problems, delta)


def _diagnostics(diagnostics: list[Diagnostic], delta: int) -> list[Diagnostic]:
    return [_diagnostic(d, delta) for d in diagnostics] if diagnostics else diagnostics


def _diagnostic(diagnostic: Diagnostic, delta: int) -> Diagnostic:
    related = tuple(Related(_span(r.span, delta), r.message) for r in diagnostic.related)
    fixes = tuple(Fix(f.title, _span(f.span, delta), f.text) for f in diagnostic.fixes)
    return replace(diagnostic, span=_span(diagnostic.span, delta), related=related, fixes=fixes)
