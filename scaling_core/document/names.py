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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, replace
from typing import get_args

from scaling_core.diagnostics import Diagnostic, Related
from scaling_core.document.effects import region_bounds
from scaling_core.document.regions import CalcRegion, ProblemRegion, Region
from scaling_core.document.results import Binding
from scaling_core.expr import syntax as ast
from scaling_core.text import LineIndex, holding
from scaling_core.units.registry import UnitRegistry

_EXPRESSIONS = get_args(ast.Expr)
_UNKNOWN_NAME = re.compile(r"unknown name '(?P<name>[^']*)'")


def nodes(expr: ast.Expr) -> Iterator[ast.Expr]:
    """Every expression node of ``expr``, ``expr`` first (depth first, in source order)."""
    stack: list[ast.Expr] = [expr]
    while stack:
        node = stack.pop()
        yield node
        children: list[ast.Expr] = []
        for field in fields(node):
            value = getattr(node, field.name)
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, _EXPRESSIONS):
                    children.append(child)
        stack.extend(reversed(children))


def bare_unit_name(expr: ast.Expr, defined: Callable[[str], bool], registry: UnitRegistry) -> ast.Name | None:
    """The first bare name in a claim or inline value that is not defined but would be read as a unit.

    Names come before units there: such a name is an unknown name when it is
    a count unit (``chips``: a count of one never mismatches, so the value
    would be silently wrong), or when nothing in the expression is a number
    or a defined name (``<!-- = days -->`` would compute "1 day").  A unit
    beside real values (``bw / s``) stays a unit, as in calc blocks.
    """
    found = list(nodes(expr))
    names = [node for node in found if isinstance(node, ast.Name)]
    undefined = [node for node in names if not defined(node.name)]
    if not undefined:
        return None
    grounded = len(undefined) < len(names) or any(isinstance(node, ast.Number) for node in found)
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


def locate_unknown_names(
    diagnostics: list[Diagnostic],
    bindings: Sequence[Binding],
    problems: list[ProblemRegion],
    regions: list[Region],
    index: LineIndex,
    path: str,
) -> list[Diagnostic]:
    """Unknown-name errors (N001) for names the draft defines elsewhere, told where.

    A definition inside another problem: "'per_chip' is defined inside
    Question 1 (line 17); names in a problem are local to it".  A definition
    below, in the use's own scope or at the top level: "'t' is defined below
    (line 9)" and why it is not seen.  Each gets the definition as related
    information.  Other diagnostics are returned as they are.
    """
    if not any(d.code == "N001" for d in diagnostics):
        return diagnostics
    by_name: dict[str, list[Binding]] = {}
    for binding in bindings:
        if binding.path == path:
            by_name.setdefault(binding.name, []).append(binding)
    starts = [region_bounds(region)[0] for region in regions]
    located = []
    for diagnostic in diagnostics:
        match = _UNKNOWN_NAME.match(diagnostic.message) if diagnostic.code == "N001" else None
        found = by_name.get(match.group("name"), []) if match else []
        if found:
            in_calc = _in_calc(regions, starts, diagnostic.span.start)
            diagnostic = _located(diagnostic, found, problems, index, in_calc)
        located.append(diagnostic)
    return located


def _in_calc(regions: list[Region], starts: list[int], offset: int) -> bool:
    at = bisect.bisect_right(starts, offset) - 1
    region = regions[at] if at >= 0 else None
    return isinstance(region, CalcRegion) and region.span.contains(offset)


def _located(
    diagnostic: Diagnostic, found: list[Binding], problems: list[ProblemRegion], index: LineIndex, in_calc: bool
) -> Diagnostic:
    use = diagnostic.span.start
    here = holding(problems, use) if problems else None
    below = None
    elsewhere: tuple[Binding, ProblemRegion] | None = None
    for binding in found:
        inside = holding(problems, binding.span.start) if problems else None
        if binding.span.start > use and (inside is None or inside is here):
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
        line = index.position(binding.span.start)[0] + 1
        note = f"'{name}' is defined inside {problem.ident} (line {line}); names in a problem are local to it"
        related = Related(binding.span, f"'{name}' is defined here, inside {problem.ident}")
    else:
        return diagnostic
    return replace(diagnostic, notes=(note, *diagnostic.notes), related=(*diagnostic.related, related))
