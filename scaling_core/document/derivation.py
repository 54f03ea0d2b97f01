"""Derivations: how a value was computed, as Markdown (hover and ``margin eval --explain``).

For an expression: its value; each library formula it calls, with the
formula's SymPy form, its source, every argument and chip field (with the
hardware source), the numbers substituted and the result; and the chain of
definitions its names depend on, with where each is defined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from scaling_core import prelude
from scaling_core.document.results import Binding, DocumentAnalysis
from scaling_core.document.shift import shift_tree
from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import EvaluationError, Record, ShapeValue, Value
from scaling_core.formulas.call import FormulaCall
from scaling_core.formulas.symbolic import FIELD_SYMBOLS, symbolic
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.display import format_quantity
from scaling_core.units.quantity import Quantity
from scaling_core.units.registry import default_registry

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 3}
MAX_CHAIN = 40


def show(value: Value) -> str:
    """A value for a derivation: a quantity's display, a record's title, a shape's dtype."""
    if isinstance(value, Quantity):
        return format_quantity(value, 4)
    if isinstance(value, Record):
        return f"{value.name} ({value.title})"
    if isinstance(value, ShapeValue):
        return f"{value.dtype}[{', '.join(format(d, 'g') for d in value.dims)}]"
    return str(value)


def substitute(expr: ast.Expr, values: dict[str, Value]) -> str:
    """Print ``expr`` with names replaced by their values (``max(4 × 1 µs / 2, …)``)."""

    def text(node: ast.Expr, parent: int) -> str:
        if isinstance(node, ast.Number):
            return node.text
        if isinstance(node, ast.Name):
            return show(values[node.name]) if node.name in values else node.name
        if isinstance(node, ast.WithUnit):
            return f"{text(node.operand, 4)} {node.unit.text}"
        if isinstance(node, ast.Field):
            target = values.get(node.target.name) if isinstance(node.target, ast.Name) else None
            if isinstance(target, Record) and node.name in target.fields:
                return format_quantity(target.fields[node.name], 4)
            return f"{text(node.target, 4)}.{node.name}"
        if isinstance(node, ast.Unary):
            return f"{node.op}{text(node.operand, 3)}"
        if isinstance(node, ast.Binary):
            mine = _PRECEDENCE[node.op]
            symbol = {"*": " × ", "/": " / ", "**": "^", "+": " + ", "-": " − "}[node.op]
            inner = f"{text(node.left, mine)}{symbol}{text(node.right, mine + (node.op != '**'))}"
            return f"({inner})" if mine < parent else inner
        if isinstance(node, ast.Call):
            return f"{node.name}({', '.join(text(a, 0) for a in node.args)})"
        return "…"

    return text(expr, 0)


def _nodes(node: object) -> Iterator[object]:
    """Every syntax node under ``node`` (units excluded), depth first."""
    yield node
    for child in getattr(node, "__slots__", ()):
        value = getattr(node, child, None)
        for item in value if isinstance(value, tuple) else (value,):
            if hasattr(item, "span") and not isinstance(item, ast.UnitExpr):
                yield from _nodes(item)


def _fields_used(expr: ast.Expr) -> list[ast.Field]:
    return [node for node in _nodes(expr) if isinstance(node, ast.Field)]


def names_used(expr: ast.Expr) -> list[str]:
    """Names an expression refers to, in order, without repeats."""
    return list(dict.fromkeys(node.name for node in _nodes(expr) if isinstance(node, ast.Name)))


def explain_call(call: FormulaCall, source: Callable[[ast.Expr], str]) -> list[str]:
    """The Markdown lines explaining one formula call."""
    formula = call.formula
    lines = [f"`{formula.signature}`: {formula.doc}", f"Source: {formula.source}", "",
             f"    {formula.name} = {symbolic(formula)}", "", "| symbol | argument | value |", "|---|---|---|"]  # fmt: skip
    for position, param in enumerate(formula.params):
        value = call.arguments[param.name]
        written = (
            f"`{source(call.node.args[position])}`" if position < len(call.node.args) else f"default `{param.default}`"
        )
        lines.append(f"| {param.name} | {written} | {show(value)} |")
    for field in _fields_used(formula.tree()):
        if isinstance(field.target, ast.Name) and isinstance(chip := call.arguments.get(field.target.name), Record):
            field_value = chip.fields.get(field.name)
            origin = chip.sources.get(field.name, "")
            note = f"; {chip.notes[field.name]}" if field.name in chip.notes else ""
            shown = format_quantity(field_value, 4) if field_value is not None else "missing"
            lines.append(
                f"| {FIELD_SYMBOLS.get(field.name, field.name)} | `{chip.name}.{field.name}` | {shown} — {origin}{note} |"
            )
    lines += ["", f"    = {substitute(formula.tree(), call.arguments)}", f"    = {show(call.result)}"]
    return lines


def explain(
    text: str,
    title: str,
    expr: ast.Expr,
    value: Value,
    calls: list[FormulaCall],
    binding: Callable[[str], Binding | None],
    records: dict[str, Record],
    line_of: Callable[[Binding], str],
) -> str:
    """The derivation of ``expr`` as Markdown; ``text`` is what its spans index, ``title`` the statement."""

    def source(node: ast.Expr) -> str:
        return text[node.span.start : node.span.end]

    lines = [f"**`{title.strip()}`** = **{show(value)}**", ""]
    for call in calls:
        lines += explain_call(call, source) + [""]
    for field in _fields_used(expr):
        chip = records.get(field.target.name) if isinstance(field.target, ast.Name) else None
        if chip is not None and field.name in chip.fields:
            note = f" ({chip.notes[field.name]})" if field.name in chip.notes else ""
            lines.append(f"- `{chip.name}.{field.name}` = {format_quantity(chip.fields[field.name], 4)}: "
                         f"{chip.sources.get(field.name, '')}{note}")  # fmt: skip
    chain = _definitions(names_used(expr), binding, line_of)
    if chain:
        lines += ["", "Defined as:"] + chain
    return "\n".join(lines).rstrip() + "\n"


def _definitions(
    names: list[str], binding: Callable[[str], Binding | None], line_of: Callable[[Binding], str]
) -> list[str]:
    lines: list[str] = []
    seen: set[str] = set()
    queue = list(names)
    while queue and len(seen) < MAX_CHAIN:
        name = queue.pop(0)
        found = binding(name)
        if name in seen or found is None or found.expr is None:
            continue
        seen.add(name)
        lines.append(f"- `{name} = {found.source}` = {show(found.value)} ({line_of(found)})")
        queue += [n for n in names_used(found.expr) if n not in seen]
    return lines


def derivation_at(analysis: DocumentAnalysis, offset: int) -> str | None:
    """The derivation of the value shown at ``offset`` (a calc statement or inline value), or None."""
    value_result = next((v for v in analysis.values if v.span.contains(offset) and v.expr is not None), None)
    if value_result is None or value_result.expr is None:
        return None
    problem = analysis.problem_at(value_result.span.start)

    def visible(binding: Binding) -> bool:
        if binding.span.start >= value_result.span.start:
            return False
        inside = analysis.problem_at(binding.span.start)
        return inside is None or inside is problem

    scope = {name: b for name, b in analysis.exports.items() if b.path != analysis.path}  # imported names
    for binding in analysis.bindings:
        if visible(binding):
            scope[binding.name] = binding
    evaluator = Evaluator(
        default_registry(),
        lambda name: scope[name].value if name in scope else analysis.records.get(name),
        list,
        prelude.call,
    )
    evaluator.trace = []
    expr = shift_tree(value_result.expr, value_result.shift)
    try:
        with quiet_arrays():
            value = evaluator.statement_value(expr)
    except EvaluationError:
        return None
    title = analysis.text[value_result.span.start : value_result.span.end]
    return explain(analysis.text, title, expr, value, evaluator.trace, scope.get, analysis.records,
                   lambda b: f"line {analysis.line(b.span.start)}" + (f" of {b.path}" if b.path != analysis.path else ""))  # fmt: skip
