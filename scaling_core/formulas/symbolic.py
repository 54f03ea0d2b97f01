"""SymPy forms of formulas, built from our own syntax tree.

SymPy is imported lazily (it costs ~0.3 s) and never sees document text:
we construct its expressions node by node.  Units are dropped (they are
checked numerically); chip fields become the book's symbols (C, W_hbm, W_ici …).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scaling_core.expr import syntax as ast
from scaling_core.formulas.model import Formula

if TYPE_CHECKING:
    import sympy

#: The book's symbol for each chip field.
FIELD_SYMBOLS = {
    "flops_bf16": "C", "flops_fp8": "C_fp8", "flops_int8": "C_int8", "hbm": "M_hbm", "hbm_bw": "W_hbm",
    "ici_bw_oneway": "W_ici_oneway", "ici_bw_bidi": "W_ici", "ici_links": "n_links", "ici_hop_latency": "t_hop",
    "dcn_bw": "W_dcn", "pcie_bw": "W_pcie", "ici_egress_oneway": "W_egress", "ici_egress_bidi": "W_egress_bidi",
    "critical_intensity": "alpha_hbm", "ici_intensity": "alpha_ici",
}  # fmt: skip


def to_sympy(expr: ast.Expr, symbols: dict[str, Any] | None = None) -> sympy.Expr:
    """Build the SymPy expression of a calc expression (units dropped)."""
    import sympy  # lazily: SymPy costs ~0.3 s of start-up and only hover and docs need it

    symbols = symbols or {}

    def build(node: ast.Expr) -> Any:
        if isinstance(node, ast.Number):
            return sympy.Integer(int(node.value)) if node.value.is_integer() else sympy.Float(node.value, 15)
        if isinstance(node, ast.Name):
            return symbols.get(node.name) or sympy.Symbol(node.name, positive=True)
        if isinstance(node, ast.WithUnit):
            return build(node.operand)
        if isinstance(node, ast.Unary):
            return -build(node.operand) if node.op == "-" else build(node.operand)
        if isinstance(node, ast.Field):
            return sympy.Symbol(FIELD_SYMBOLS.get(node.name, node.name), positive=True)
        if isinstance(node, ast.Binary):
            left, right = build(node.left), build(node.right)
            return {"+": left + right, "-": left - right, "*": left * right, "/": left / right}.get(
                node.op, left**right
            )
        if isinstance(node, ast.Call):
            args = [build(a) for a in node.args]
            functions = {"max": sympy.Max, "min": sympy.Min, "floor": sympy.floor, "ceil": sympy.ceiling,
                         "sqrt": sympy.sqrt, "log2": lambda x: sympy.log(x, 2), "abs": sympy.Abs}  # fmt: skip
            if node.name in functions:
                return functions[node.name](*args)
            return sympy.Function(node.name)(*args)
        raise ValueError(f"no symbolic form for {type(node).__name__}")

    return build(expr)


def symbolic(formula: Formula) -> sympy.Expr:
    """The formula's SymPy form, e.g. ``Max(V/W_ici, X*t_hop/2)`` for ``allgather_time``."""
    return to_sympy(formula.tree())


def latex(formula: Formula) -> str:
    """The formula in LaTeX (for hover and documentation)."""
    import sympy  # lazily, as in to_sympy

    expr = symbolic(formula)
    names = {}
    for symbol in expr.free_symbols:
        head, _, tail = symbol.name.partition("_")
        names[symbol] = f"{head}_{{\\text{{{tail.replace('_', ' ')}}}}}" if tail else head
    return str(sympy.latex(expr, symbol_names=names))
