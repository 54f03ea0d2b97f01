"""Names and where they live: names before units in prose, and unknown names that are defined elsewhere.

Two author traps are decided here.  In a claim (``<!-- = chips -->``) or an
inline value (``{calc}`chips```) a bare word is a *name*: when no definition
gives it a value it is an unknown name (N001), never a unit of one
(``chips`` would otherwise be the count ``1 chip``).  And an unknown name
that the draft does define, but in a scope the use cannot see (inside
another problem, or below a calc statement), says where it is defined.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields, replace
from functools import lru_cache
from operator import attrgetter
from typing import get_args

from scaling_core.diagnostics import Diagnostic, Related
from scaling_core.document.effects import region_bounds
from scaling_core.document.regions import CalcRegion, ProblemRegion, Region
from scaling_core.document.results import Binding
from scaling_core.document.suggest import ScopeNames, locked, scope_names
from scaling_core.expr import syntax as ast
from scaling_core.text import LineIndex, holding_position
from scaling_core.units.registry import UnitRegistry

_EXPRESSIONS = get_args(ast.Expr)
_UNKNOWN_NAME = re.compile(r"unknown name '(?P<name>[^']*)'")


def nodes(expr: ast.Expr) -> Iterator[ast.Expr]:
    """Every expression node of ``expr``, ``expr`` first (depth first, in source order)."""
    stack: list[ast.Expr] = [expr]
    while stack:
        node = stack.pop()
        yield node
        kind = type(node)
        if kind is ast.Number or kind is ast.Name:  # leaves, by far the commonest nodes (hot path)
            continue
        if type(node) is ast.Binary:  # and the commonest inner node
            stack.append(node.right)
            stack.append(node.left)
            continue
        children: list[ast.Expr] = []
        for name in _CHILDREN.get(kind) or _children(kind):
            value = getattr(node, name)
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, _EXPRESSIONS):
                    children.append(child)
        stack.extend(reversed(children))


def _children(kind: type) -> tuple[str, ...]:
    """A node class's fields that may hold expressions, in order (``dataclasses.fields`` is slow on every node)."""
    return tuple(field.name for field in fields(kind) if "Expr" in str(field.type))


_CHILDREN = {kind: _children(kind) for kind in _EXPRESSIONS}


def bare_unit_name(expr: ast.Expr, defined: Callable[[str], bool], registry: UnitRegistry) -> ast.Name | None:
    """The first bare name in a claim or inline value that is not defined but would be read as a unit.

    Names come before units there: such a name is an unknown name when it is
    a count unit (``chips``: a count of one never mismatches, so the value
    would be silently wrong), or when nothing in the expression is a number
    or a defined name (``<!-- = days -->`` would compute "1 day").  A unit
    beside real values (``bw / s``) stays a unit, as in calc blocks.
    """
    names: list[ast.Name] = []
    number = False
    for node in nodes(expr):  # one pass (every claim asks; most hold no name at all)
        kind = type(node)
        if kind is ast.Name:
            names.append(node)  # type: ignore[arg-type]
        elif kind is ast.Number:
            number = True
    undefined = [node for node in names if not defined(node.name)]
    if not undefined:
        return None
    grounded = number or len(undefined) < len(names)
    for node in undefined:
        unit = registry.lookup(node.name)
        if unit is None or not (len(node.name) > 1 or node.name in ("s", "h")):
            continue  # not a unit: the evaluator reports it
        if unit.count_label is not None or not grounded:
            return node
    return None


def bare_unit_note(name: str) -> str:
    """Why a unit spelling in a claim or inline value was read as a name."""
    return f"a bare word here is a name; a unit goes after a number (2 {name})"


def suggest_names(
    diagnostics: list[Diagnostic],
    top_level: Iterable[str],
    bindings: Sequence[Binding],
    problems: list[ProblemRegion],
    records: Iterable[str],
    path: str,
) -> list[Diagnostic]:
    """Unknown-name errors (N001) with their did-you-mean note: names of the use's scope that are spelled alike.

    Added once the analysis is done (regions are evaluated without it, so an
    unknown name replays like any other result): the candidates are the names
    of the scope the use is in, wherever in it they are defined (the top
    level's, with imported ones, plus those of the problem holding the use),
    and the chips, but not the name itself (defined where the use cannot see
    it: :func:`locate_unknown_names` says where).  What was found is kept
    up to date across analyses (``suggest.py``): no scan of every name.
    """
    if not any(d.code == "N001" for d in diagnostics):
        return diagnostics
    shared = frozenset([*top_level, *records])
    scopes: dict[ProblemRegion | None, ScopeNames] = {}  # brought up to date once per analysis
    suggested = []
    problem_at = holding_position(problems)  # asked for each unknown name
    with locked():
        for diagnostic in diagnostics:
            name = unknown_name(diagnostic.message) if diagnostic.code == "N001" else None
            if name is not None and not (
                diagnostic.notes and any(n.startswith("did you mean") for n in diagnostic.notes)
            ):
                at = problem_at(diagnostic.span.start)
                problem = problems[at] if at >= 0 else None
                scope = scopes.get(problem)
                if scope is None:
                    local = [b.name for b in bindings if problem is not None and b.path == path
                             and problem.span.start <= b.start < problem.span.end]  # fmt: skip
                    ident = problem.ident if problem is not None else None
                    scope = scopes[problem] = scope_names(path, ident, shared | frozenset(local), shared)
                note = scope.note(name)
                if note is not None:
                    diagnostic = _noted(diagnostic, note)
            suggested.append(diagnostic)
    return suggested


@lru_cache(maxsize=4096)
def unknown_name(message: str) -> str | None:
    """The name an unknown-name error (N001) is about, read from its message (the same messages come back
    at every keystroke: remembered)."""
    match = _UNKNOWN_NAME.match(message)
    return match.group("name") if match is not None else None


def locate_unknown_names(
    diagnostics: list[Diagnostic],
    bindings: Sequence[Binding],
    problems: list[ProblemRegion],
    in_calc: Callable[[int], bool],
    index: LineIndex,
    path: str,
) -> list[Diagnostic]:
    """Unknown-name errors (N001) for names the draft defines elsewhere, told where.

    A definition inside another problem: "'per_chip' is defined inside
    Question 1 (line 17); names in a problem are local to it".  A definition
    below, in the use's own scope or at the top level: "'t' is defined below
    (line 9)" and why it is not seen.  Each gets the definition as related
    information.  Other diagnostics are returned as they are.  ``in_calc``
    says whether an offset is inside a calc block.
    """
    unknown = {unknown_name(d.message) for d in diagnostics if d.code == "N001"}
    unknown.discard(None)
    if not unknown or unknown.isdisjoint(map(_name, bindings)):  # misspelt names, defined nowhere: in C speed
        return diagnostics
    by_name: dict[str, list[Binding]] = {}
    for binding in bindings:  # only the names unknown somewhere: a draft has thousands of others
        if binding.name in unknown and binding.path == path:
            by_name.setdefault(binding.name, []).append(binding)
    located = []
    position = holding_position(problems)

    def problem_at(offset: int) -> ProblemRegion | None:
        at = position(offset)
        return problems[at] if at >= 0 else None

    for diagnostic in diagnostics:
        name = unknown_name(diagnostic.message) if diagnostic.code == "N001" else None
        found = by_name.get(name, []) if name is not None else []
        if found:
            diagnostic = _located(diagnostic, found, problem_at, index, in_calc(diagnostic.span.start))
        located.append(diagnostic)
    return located


_name = attrgetter("name")


def _noted(diagnostic: Diagnostic, note: str) -> Diagnostic:
    """``diagnostic`` with ``note`` first among its notes (``dataclasses.replace`` without its keyword
    handling: ~200 unknown names get theirs again on every keystroke)."""
    d = diagnostic
    return Diagnostic(d.code, d.message, d.span, d.severity, d.related, d.fixes, (note, *d.notes))


def in_calc_block(regions: Sequence[Region], offset: int, base: int = 0) -> bool:
    """Whether ``offset`` is inside a calc block of ``regions`` (in order, their offsets ``base`` before the document's)."""
    at = bisect.bisect_right(regions, offset - base, key=_region_start) - 1
    region = regions[at] if at >= 0 else None
    return isinstance(region, CalcRegion) and region.span.contains(offset - base)


def _region_start(region: Region) -> int:
    return region_bounds(region)[0]


def _located(
    diagnostic: Diagnostic,
    found: list[Binding],
    problem_at: Callable[[int], ProblemRegion | None],
    index: LineIndex,
    in_calc: bool,
) -> Diagnostic:
    """``diagnostic`` (an unknown name that ``found`` define) told where they are; ``problem_at`` says which
    problem holds an offset (the outermost), or None."""
    use = diagnostic.span.start
    here = problem_at(use)
    below = None
    elsewhere: tuple[Binding, ProblemRegion] | None = None
    for binding in found:
        inside = problem_at(binding.start)
        if binding.start > use and (inside is None or inside is here):
            below = below or binding
        elif inside is not None and inside is not here and elsewhere is None:
            elsewhere = (binding, inside)
    name = found[0].name
    if below is not None:
        line = index.position(below.span.start)[0] + 1
        if in_calc:
            why = "a calc block sees only the names defined above it"
        else:
            why = f"outside {here.ident}; a forward reference looks only inside its own problem" if here else ""
        note = f"'{name}' is defined below (line {line})" + (f"; {why}" if why else "")
        related = Related(below.span, f"'{name}' is defined here")
    elif elsewhere is not None:
        binding, problem = elsewhere
        line = index.position(binding.start)[0] + 1
        note = f"'{name}' is defined inside {problem.ident} (line {line}); names in a problem are local to it"
        related = Related(binding.span, f"'{name}' is defined here, inside {problem.ident}")
    else:
        return diagnostic
    return replace(diagnostic, notes=(note, *diagnostic.notes), related=(*diagnostic.related, related))
