"""Expressions read again from a draft's text, for derivations (hover, ``margin eval --explain``).

An analysis keeps no syntax trees: a value, a definition and a check say
where they are written, and a derivation reads the expression there again,
the way the analysis read it (the same readers, on the same lines).  A tree
per statement was ~15% of a long draft's analysis and cache (19 MB of a 5 MB
draft's), kept for the few values an author hovers; reading one statement
again takes tens of microseconds.  What cannot be read again gets no derivation (None),
never a wrong one: a value is derived only from a statement whose span is
the value's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from scaling_core.document.results import Binding, CheckKind, CheckResult, DocumentAnalysis, ValueResult
from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parse_memo import ParseMemo
from scaling_core.expr.parser import parse_claim_expression, parse_statements
from scaling_core.text import Span
from scaling_core.units.registry import default_registry

#: A ``{calc}`` role: its backtick run and its content.
ROLE = re.compile(r"\{[^}]*\}(`+)(.*)\1\s*\Z", re.S)
#: A claim's marker right after its number (past closing emphasis): ``**22 days**<!-- ≈ t -->``.
_MARKER = re.compile(r"[*_ \t]*<!--\s*(?:≈|~=|==|<=|>=|≤|≥|<|>|=)(.*?)-->", re.S)
#: What a calc block's lines may start with inside a list or a quote (``extract.py`` strips it).
_LINE_PREFIX = " >\t"


def _is_unit(spelling: str) -> bool:
    return spelling in default_registry()


def value_expression(analysis: DocumentAnalysis, value: ValueResult) -> ast.Expr | None:
    """The expression ``value`` shows (a calc statement's or a ``{calc}`` role's), read again from the text; None
    if it is not written there as the analysis read it."""
    if not value.written:
        return None
    text, span = analysis.text, value.span
    if value.inline:
        role = ROLE.match(text[span.start : span.end])
        if role is None:
            return None
        inner = role.group(2)
        content = inner.strip(" ")
        base = span.start + role.start(2) + len(inner) - len(inner.lstrip(" "))
        _lexed, statements, problems = ParseMemo(_is_unit).inline(content, base)
        found = statements[0] if len(statements) == 1 and not problems else None
        return found.expr if isinstance(found, ast.Show) else None
    lines = _statement_lines(text, span)
    _lexed, statements, _problems = ParseMemo(_is_unit).block(text, lines, lines[-1][0] + len(lines[-1][1]))
    for statement in statements:
        if isinstance(statement, (ast.Definition, ast.Show)) and statement.span == span:
            return statement.expr
    return None


def _statement_lines(text: str, span: Span) -> list[tuple[int, str]]:
    """The lines a calc statement at ``span`` is written on, from its start, as a calc block gives them to the
    reader: (offset, text), without a list's or a quote's prefix."""
    lines: list[tuple[int, str]] = []
    start = span.start
    while True:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        row = text[start:end].removesuffix("\r")
        strip = len(row) - len(row.lstrip(_LINE_PREFIX)) if lines else 0
        lines.append((start + strip, row[strip:]))
        if end >= span.end or end >= len(text):
            return lines
        start = end + 1


def names_defining(binding: Binding) -> list[str]:
    """The names ``binding``'s expression uses, in order, read again from its text (none if it has no expression
    or cannot be read)."""
    if not binding.written:
        return []
    tokens, problems = tokenize(binding.source, 0)
    expr, _tolerance, problem = parse_claim_expression(tokens, _is_unit)
    if problems or problem or expr is None:
        return []
    return names_used(expr)


def nodes(node: object) -> Iterator[object]:
    """Every syntax node under ``node`` (units excluded), depth first (iterative: chains nest deep)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = []
        for child in getattr(current, "__slots__", ()):
            value = getattr(current, child, None)
            for item in value if isinstance(value, tuple) else (value,):
                if hasattr(item, "span") and not isinstance(item, ast.UnitExpr):
                    children.append(item)
        stack.extend(reversed(children))


def names_used(expr: ast.Expr) -> list[str]:
    """Names an expression refers to, in order, without repeats."""
    return list(dict.fromkeys(node.name for node in nodes(expr) if isinstance(node, ast.Name)))


def computed_side(analysis: DocumentAnalysis, check: CheckResult) -> ast.Expr | None:
    """The expression a check computed, read again from the text (None if it cannot be read)."""
    if check.kind == CheckKind.CALC:
        tokens, problems = tokenize(analysis.text[check.span.start : check.span.end], check.span.start)
        statements, _errors = parse_statements(tokens, _is_unit)
        found = statements[0] if len(statements) == 1 else None
        return found.left if isinstance(found, ast.Check) and not problems else None
    if check.kind == CheckKind.CODE and check.left is not None:
        text, base = check.left, check.span.start
    elif check.kind == CheckKind.CLAIM and (marker := _MARKER.match(analysis.text, check.span.end)) is not None:
        text, base = marker.group(1), marker.start(1)
    else:
        return None
    tokens, problems = tokenize(text, base)
    expr, _tolerance, problem = parse_claim_expression(tokens, _is_unit)
    return None if problems or problem else expr
