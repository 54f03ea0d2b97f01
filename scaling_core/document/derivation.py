"""Derivations: how a value was computed, as Markdown (hover and ``margin eval --explain``).

For an expression: its value; each library formula it calls, with the
formula's SymPy form, its source, every argument and chip field (with the
hardware source), the numbers substituted and the result; and the chain of
definitions its names depend on, with where each is defined.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scaling_core import prelude
from scaling_core.document.lookup import VisibleScope, named_value_at, references_index, values_index
from scaling_core.document.results import Binding, CheckResult, DocumentAnalysis, ValueResult
from scaling_core.document.written import ROLE, computed_side, names_defining, names_used, nodes, value_expression
from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.values import EvaluationError, Record, ShapeValue, Value
from scaling_core.formulas.call import FormulaCall
from scaling_core.formulas.symbolic import FIELD_SYMBOLS, symbolic
from scaling_core.units.arrays import is_array, quiet_arrays
from scaling_core.units.display import format_in_unit, format_quantity
from scaling_core.units.quantity import Quantity
from scaling_core.units.registry import default_registry

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "**": 3}
MAX_CHAIN = 40
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")

#: A definition step as shown in a chain: (its statement as written, its value as its inlay shows it).
Step = Callable[[Binding], tuple[str, str]]


def code(text: str) -> str:
    """``text`` as one Markdown code span, fenced by more backticks than any run inside it."""
    text = re.sub(r"\r\n|\r|\n", " ", text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def escape(text: str) -> str:
    """Plain text for Markdown: characters that would open emphasis, code, links or tags escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def unitless_note(value: Value | None) -> str:
    """A remark for a value whose numerator has no unit (its unit is inferred where it is used), else ''."""
    if isinstance(value, Quantity) and value.free and value.dim != 0:
        return " (its numerator has no unit: inferred where the value is used)"
    return ""


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
    """Print ``expr`` with names replaced by their values (``max(4 × 1 µs / 2, …)``).

    Iterative (an explicit stack): a flat chain of 5,000 terms nests 5,000 deep.
    """
    done: list[str] = []  # printed operands, the last on top
    #: A node to print (with its parent's precedence), or a join: the top ``count`` printed
    #: operands become ``before + between.join(them) + after``.
    work: list[tuple[ast.Expr, int] | tuple[int, str, str, str]] = [(expr, 0)]
    while work:
        item = work.pop()
        if len(item) == 4:
            count, before, between, after = item
            parts = done[len(done) - count :]
            del done[len(done) - count :]
            done.append(before + between.join(parts) + after)
            continue
        node, parent = item
        join: tuple[int, str, str, str] | None = None
        children: list[tuple[ast.Expr, int]] = []
        if isinstance(node, ast.Number):
            done.append(node.text)
        elif isinstance(node, ast.Name):
            done.append(show(values[node.name]) if node.name in values else node.name)
        elif isinstance(node, ast.WithUnit):
            join, children = (1, "", "", f" {node.unit.text}"), [(node.operand, 4)]
        elif isinstance(node, ast.Field):
            target = values.get(node.target.name) if isinstance(node.target, ast.Name) else None
            if isinstance(target, Record) and node.name in target.fields:
                done.append(format_quantity(target.fields[node.name], 4))
            else:
                join, children = (1, "", "", f".{node.name}"), [(node.target, 4)]
        elif isinstance(node, ast.Unary):
            join, children = (1, node.op, "", ""), [(node.operand, 3)]
        elif isinstance(node, ast.Binary):
            mine = _PRECEDENCE[node.op]
            symbol = {"*": " × ", "/": " / ", "**": "^", "+": " + ", "-": " − "}[node.op]
            wrap = mine < parent
            join = (2, "(" if wrap else "", symbol, ")" if wrap else "")
            children = [(node.left, mine), (node.right, mine + (node.op != "**"))]
        elif isinstance(node, ast.Call):
            join, children = (len(node.args), f"{node.name}(", ", ", ")"), [(arg, 0) for arg in node.args]
        elif isinstance(node, ast.Index):
            join, children = (1, "", "", f'["{node.key}"]'), [(node.target, 4)]
        else:
            done.append("…")
        if join is not None:
            work.append(join)
            work.extend(reversed(children))  # the first operand is printed first
    return done[0]


def _record_of(node: ast.Expr, records: dict[str, Record]) -> Record | None:
    """The chip, slice or axis a field's target names (``h100``, ``tpu_v5p["4x4x4"]``), if it is one."""
    if isinstance(node, ast.Name):
        return records.get(node.name)
    if isinstance(node, ast.Index):
        owner = _record_of(node.target, records)
        found = owner.slicer(node.key) if owner is not None and owner.slicer is not None else None
        return found if isinstance(found, Record) else None
    return None


def _fields_used(expr: ast.Expr) -> list[ast.Field]:
    return [node for node in nodes(expr) if isinstance(node, ast.Field)]


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
    *,
    shown: str | None = None,
    aside: str = "",
    step: Step | None = None,
) -> str:
    """The derivation of ``expr`` as Markdown; ``text`` is what its spans index, ``title`` the statement.

    ``shown`` is the headline value (by default the value itself) and ``aside`` what follows it;
    ``step`` is how a definition in the chain is shown (by default its name, expression and value).
    """

    def source(node: ast.Expr) -> str:
        return text[node.span.start : node.span.end]

    lines = [f"**{code(title.strip())}** = **{shown if shown is not None else show(value)}**{aside}", ""]
    for call in calls:
        lines += explain_call(call, source) + [""]
    for field in _fields_used(expr):
        chip = _record_of(field.target, records)
        if chip is not None and field.name in chip.fields:
            note = f" ({escape(chip.notes[field.name])})" if field.name in chip.notes else ""
            lines.append(f"- `{chip.name}.{field.name}` = {format_quantity(chip.fields[field.name], 4)}: "
                         f"{chip.sources.get(field.name, '')}{note}")  # fmt: skip
    chain = _definitions(names_used(expr), binding, line_of, step or _plain_step)
    if chain:
        lines += ([""] if lines[-1] else []) + ["Defined as:"] + chain
    return "\n".join(lines).rstrip() + "\n"


def _plain_step(binding: Binding) -> tuple[str, str]:
    return f"{binding.name} = {binding.source}", show(binding.value) + unitless_note(binding.value)


def _definitions(names: list[str], binding: Callable[[str], Binding | None], line_of: Callable[[Binding], str],
                 step: Step) -> list[str]:  # fmt: skip
    lines: list[str] = []
    seen: set[str] = set()
    queue = list(names)
    while queue and len(seen) < MAX_CHAIN:
        name = queue.pop(0)
        found = binding(name)
        if name in seen or found is None or not found.written:
            continue
        seen.add(name)
        statement, value = step(found)
        lines.append(f"- {code(statement)} = {value} ({line_of(found)})")
        queue += [n for n in names_defining(found) if n not in seen]
    return lines


# -- derivations in a document (hover) ------------------------------------------
def derivation_at(analysis: DocumentAnalysis, offset: int) -> str | None:
    """The derivation of the value shown at ``offset`` (a calc statement or inline value), or None.

    Its headline is the value as the inlay shows it (after ``-> unit`` and unit inference).
    """
    result = values_index(analysis).first_holding(offset, _written)
    expr = value_expression(analysis, result) if result is not None else None
    if result is None or expr is None:
        return None
    title = analysis.text[result.span.start : result.span.end]
    if result.inline and (role := ROLE.match(title)) is not None:
        title = role.group(2)
    return _derive(analysis, expr, result.span.start, title, *_headline(result))


def check_derivation(analysis: DocumentAnalysis, check: CheckResult) -> str | None:
    """How a check's computed side was derived (shown under its verdict), or None if it was not evaluated."""
    if check.computed is None:
        return None
    expr = computed_side(analysis, check)
    if expr is None:
        return None
    title = analysis.text[expr.span.start : expr.span.end]
    return _derive(analysis, expr, check.span.start, title, check.computed_display, unitless_note(check.computed))


def _headline(result: ValueResult) -> tuple[str, str]:
    """The inlay's value, and after it (when the inlay rounds) the value to 4 significant digits in its unit."""
    shown, quantity = result.display, result.quantity
    if quantity is None or is_array(quantity.value):
        return shown, ""
    if isinstance(result.display_as, tuple):
        precise = format_in_unit(quantity, *result.display_as, 4)
    else:
        precise = format_quantity(quantity, 4)
    return shown, (f" ({precise})" if precise != shown else "") + unitless_note(quantity)


def _derive(analysis: DocumentAnalysis, expr: ast.Expr, start: int, title: str, shown: str, aside: str) -> str | None:
    scope = _scope(analysis, start, expr)
    evaluator = Evaluator(
        default_registry(),
        lambda name: scope[name].value if name in scope else analysis.records.get(name),
        list,
        prelude.call,
    )
    evaluator.trace = []
    try:
        with quiet_arrays():
            value = evaluator.statement_value(expr)
    except EvaluationError:
        return None

    def step(binding: Binding) -> tuple[str, str]:
        result = named_value_at(analysis, binding.start) if binding.path == analysis.path else None
        if result is None or result.name != binding.name:
            return _plain_step(binding)
        return analysis.text[result.span.start : result.span.end], result.display + unitless_note(result.quantity)

    def line_of(binding: Binding) -> str:
        return f"line {analysis.line(binding.start)}" + (f" of {binding.path}" if binding.path != analysis.path else "")

    return explain(analysis.text, title, expr, value, evaluator.trace, scope.get, analysis.records, line_of,
                   shown=shown, aside=aside, step=step)  # fmt: skip


def _scope(analysis: DocumentAnalysis, start: int, expr: ast.Expr) -> VisibleScope:
    """The definitions visible at ``start``; the names ``expr`` uses resolve as the analysis resolved them
    (a claim may use a definition below it).  Looked up per name (``lookup.py``), not built per hover."""
    resolved: dict[str, Binding] = {}
    for reference in references_index(analysis).starting_between(expr.span.start, expr.span.end):
        if reference.binding is not None:
            resolved[reference.name] = reference.binding
    return VisibleScope(analysis, start, resolved)


def _written(value: ValueResult) -> bool:
    return value.written
