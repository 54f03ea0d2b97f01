"""Arithmetic in LaTeX math, checked like a code-span chain (only with the ``latex_math`` setting).

Books write arithmetic in math as often as in code spans:
``$2 \\cdot 24576 / 2400 = 20$``,
``$\\frac{2 \\cdot 8192 \\cdot 8192}{9 \\times 10^{10}} \\approx 1.5\\,\\text{ms}$``.
:func:`find_math` finds the math of a block of Markdown (``$…$`` by the
dollar-math rules, so prices in prose are never math; ``$$…$$``;
``\\(…\\)`` and ``\\[…\\]``).  :func:`read_math` cuts a segment into
equations and links at its relations, reads each link with
``latex_terms.py``, and keeps the runs of readable links joined by ``=`` or
``\\approx`` whose last link is a number as written: those are checked as a
code span's chain is.  A link with a symbol it cannot read (``B``, ``F``,
``\\alpha``, ``\\sum``) is left alone, and so is every relation other than
``=`` and ``\\approx``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scaling_core.document.latex_terms import LatexToken, Translation, latex_tokens, translate_link
from scaling_core.document.regions import MathRegion
from scaling_core.expr import syntax as ast
from scaling_core.expr.chain import ChainLink, Equation
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_claim_expression
from scaling_core.text import Span, new_span

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_OPENER = re.compile(r"\$\$?|\\[(\[]")
_BLANK_LINE = re.compile(r"\n[ \t>]*\n")
_MAY_RELATE = re.compile(r"[=≈]|\\(?:approx|simeq|thickapprox)")

#: Relations a chain may hold, as written in math -> ``=`` or ``≈``.
CHAIN_RELATIONS = {"=": "=", "≈": "≈", r"\approx": "≈", r"\simeq": "≈", r"\approxeq": "≈", r"\thickapprox": "≈"}
#: Relations that end a chain (``\sim`` is "of the order of" more often than "about").
OTHER_RELATIONS = frozenset(
    ("<", ">", "≤", "≥", "≠", "∼", "≪", "≫", "→", "⇒", "∝", r"\lt", r"\gt", r"\le", r"\leq", r"\ge", r"\geq",
     r"\leqslant", r"\geqslant", r"\ll", r"\gg", r"\ne", r"\neq", r"\sim", r"\propto", r"\equiv", r"\to",
     r"\rightarrow", r"\Rightarrow", r"\implies", r"\iff", r"\mapsto", r"\cong", r"\lesssim", r"\gtrsim",
     r"\coloneqq", r"\in", r"\leftarrow", r"\Leftarrow", r"\longrightarrow", r"\Longrightarrow")
)  # fmt: skip
#: Tokens that make an unreadable link look like arithmetic (with a number).
_OPERATIONS = frozenset(
    (
        "+",
        "-",
        "−",
        "*",
        "/",
        "^",
        "×",
        "·",
        "÷",
        r"\cdot",
        r"\times",
        r"\div",
        r"\frac",
        r"\dfrac",
        r"\tfrac",
        r"\sqrt",
    )
)
_OPEN = {"(", "[", "{"}
_CLOSE = {")", "]", "}"}


# -- finding math ----------------------------------------------------------------
def find_math(chunk: str, base: int) -> list[MathRegion]:
    """The math segments of a block of Markdown whose code spans are already blanked out.

    ``$…$`` follows the dollar-math rules: the opening ``$`` is not followed by
    a space nor preceded by a digit, the closing one is not preceded by a
    space nor followed by a digit, and ``\\$`` is a dollar sign.  So
    ``$5 per hour and $3`` and ``$5-$10`` hold no math.  Comments are not read.
    """
    if "<!--" in chunk:
        chunk = _COMMENT.sub(lambda match: " " * len(match.group()), chunk)
    found = []
    position = 0
    while (opener := _OPENER.search(chunk, position)) is not None:
        start, position = opener.start(), opener.end()
        if _escaped(chunk, start):
            continue
        closing = _closing(chunk, opener.group(), position)
        if closing is None:
            continue
        content = chunk[position:closing]
        if not content.strip():
            continue
        end = closing + (1 if opener.group() == "$" else 2)
        found.append(MathRegion(new_span(Span, (base + start, base + end)), position - start, content))
        position = end
    return found


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd number of backslashes."""
    count = 0
    while at - count - 1 >= 0 and text[at - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _closing(chunk: str, opener: str, start: int) -> int | None:
    """Where the math opened by ``opener`` (its content starting at ``start``) closes, or None."""
    if opener == "$":
        before = chunk[start - 2] if start >= 2 else ""
        if start >= len(chunk) or chunk[start].isspace() or before.isdigit():
            return None
        at = start
        while (at := chunk.find("$", at)) >= 0 and _escaped(chunk, at):
            at += 1
        if at < 0 or chunk[at - 1].isspace() or chunk[at + 1 : at + 2].isdigit():
            return None
        return None if _BLANK_LINE.search(chunk, start, at) else at
    closer = {"$$": "$$", "\\(": "\\)", "\\[": "\\]"}[opener]
    at = start
    while (at := chunk.find(closer, at)) >= 0 and _escaped(chunk, at):
        at += 1
    return at if at >= 0 else None


def may_relate(text: str) -> bool:
    """Whether math may hold a chain: an ``=``, ``≈`` or ``\\approx`` (or the like) in it.

    Most math states no equality (``$B$``, ``$\\alpha$``): such math is never read, so the scan keeps only
    the math this says yes to (:func:`checkable_math`), as it keeps only code spans that may be checked.
    """
    return _MAY_RELATE.search(text) is not None


def checkable_math(chunk: str, base: int) -> list[MathRegion]:
    """:func:`find_math`'s math that may hold a chain (:func:`may_relate`): the regions a scan keeps."""
    return [region for region in find_math(chunk, base) if may_relate(region.text)]


# -- reading math ----------------------------------------------------------------
def read_math(region: MathRegion, is_unit: Callable[[str], bool]) -> list[Equation]:
    """The checkable chains of a math segment: runs of links joined by ``=`` or ``\\approx``.

    Each chain ends with a number as written (``20``, ``1.5\\,\\text{ms}``,
    ``1.1 \\times 10^{-5}\\,\\text{s}``): that is the claim, as in a code span;
    links after the last such number are not claims and are dropped.  A link
    that is not plain arithmetic cuts the chain; when it looks like arithmetic
    (a number and an operation: ``2 * F / 2400``) it stays in the chain without
    an expression, so the check says it was skipped (hint C002); a link of
    symbols (``T``, ``B``, ``x_1``) is left alone without a word.  Relations
    other than ``=`` and ``\\approx`` end a chain.  Spans are document
    offsets into the math as written.
    """
    chains: list[Equation] = []
    if not may_relate(region.text):
        return chains  # the scan keeps no such math; one made by hand may still be given
    base = region.content_span.start
    for equation in split_equations(latex_tokens(region.text)):
        run: list[ChainLink] = []
        for relation, tokens in equation:
            translation = translate_link(tokens, region.text, is_unit)
            expr = _parse(translation, base, is_unit) if translation is not None else None
            arithmetic = expr is not None or _looks_like_arithmetic(tokens)
            if not arithmetic or relation not in ("=", "≈"):
                _close(run, chains)
                run = []
            if expr is not None:
                run.append(ChainLink(expr, relation if run else "", expr.span))
            elif arithmetic:
                span = Span(base + tokens[0].start, base + tokens[-1].end)
                run.append(ChainLink(None, relation if run else "", span))
        _close(run, chains)
    return chains


def _looks_like_arithmetic(tokens: list[LatexToken]) -> bool:
    """Whether a link that cannot be read holds a number and an operation (``2 * F / 2400``, ``2(3 + 4)``)."""
    return any(t.kind == "number" for t in tokens) and any(t.text in _OPERATIONS for t in tokens)


def split_equations(tokens: list[LatexToken]) -> list[list[tuple[str, list[LatexToken]]]]:
    """Equations (split at ``,``, ``;``, ``\\quad`` and line breaks) as (relation before, link tokens).

    A line break followed by a relation (``\\\\ &= 6``) continues the equation,
    as in an ``aligned`` block; splits happen only outside brackets and braces.
    """
    significant = [t for t in tokens if t.kind not in ("space", "skip")]
    equations: list[list[tuple[str, list[LatexToken]]]] = []
    links: list[tuple[str, list[LatexToken]]] = []
    current: list[LatexToken] = []
    relation = ""
    depth = 0
    for index, token in enumerate(significant):
        text = token.text
        if token.kind == "quad" and depth:
            continue  # spacing inside a group
        if text in _OPEN:
            depth += 1
        elif text in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0:
            found = CHAIN_RELATIONS.get(text) or ("<" if text in OTHER_RELATIONS else "")
            if found:
                links.append((relation, current))
                current, relation = [], found
                continue
            following = significant[index + 1].text if index + 1 < len(significant) else ""
            continues = text == "\\\\" and (following in CHAIN_RELATIONS or following in OTHER_RELATIONS)
            if continues:
                continue
            if text in (",", ";", "\\\\") or token.kind == "quad":
                links.append((relation, _without_full_stop(current)))
                equations.append(links)
                links, current, relation = [], [], ""
                continue
        current.append(token)
    links.append((relation, _without_full_stop(current)))
    equations.append(links)
    return equations


def _without_full_stop(tokens: list[LatexToken]) -> list[LatexToken]:
    """A link without the sentence's full stop at its end (``= 20.$``)."""
    return tokens[:-1] if tokens and tokens[-1].text == "." else tokens


def _parse(translation: Translation, base: int, is_unit: Callable[[str], bool]) -> ast.Expr | None:
    """The calc expression of a link's translation, with its spans moved onto the math as written."""
    tokens, problems = tokenize(translation.text)
    if problems:
        return None
    origins = translation.origins
    moved = []
    for token in tokens:
        start, end = token.span
        if end > start:
            span = Span(base + origins[start][0], base + origins[end - 1][1])
        else:
            at = origins[start - 1][1] if start else origins[0][0]
            span = Span(base + at, base + at)
        moved.append(token._replace(span=span))
    expr, tolerance, problem = parse_claim_expression(moved, is_unit)
    return expr if problem is None and tolerance is None else None


def _close(run: list[ChainLink], chains: list[Equation]) -> None:
    """Keep a run as a chain when, up to its last number as written, it has two links or more.

    It "looks checked" (a skip is then hinted even when nothing could be
    compared) when it holds a link that looks like arithmetic but cannot be
    read; a run that computes nothing (``$16 = 16.0$``) is left alone.
    """
    while run and not _written_number(run[-1].expr):
        run = run[:-1]
    if len(run) >= 2:
        skipped = any(link.expr is None for link in run)
        chains.append(Equation(tuple(run), Span(run[0].span.start, run[-1].span.end), looks_checked=skipped))


def _written_number(expr: ast.Expr | None) -> bool:
    """Whether ``expr`` is a number as written, with a sign or a unit (a claim a chain ends with)."""
    if isinstance(expr, ast.WithUnit):
        expr = expr.operand
    if isinstance(expr, ast.Unary):
        expr = expr.operand
    return isinstance(expr, ast.Number)
