"""Formulas: named calc-language expressions with typed parameters and a source.

One definition serves everything: the evaluator computes it with units, the
derivation shows it with the arguments substituted, and ``symbolic.py``
builds its SymPy form from the same syntax tree (never from text handed to
SymPy).  Bodies are parsed once.
"""

from __future__ import annotations

from functools import lru_cache

from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_claim_expression
from scaling_core.records import record
from scaling_core.units.registry import default_registry

BOOK = "https://jax-ml.github.io/scaling-book"


@record
class Param:
    """A formula parameter: its unit (``""`` for a count, ``"chip"`` for a chip record, ``"axis"`` for a slice's axis)."""

    name: str
    unit: str = ""
    doc: str = ""
    #: A calc expression used when the argument is omitted; it may use earlier parameters.
    default: str | None = None


@record
class Formula:
    """A formula of the library."""

    name: str
    params: tuple[Param, ...]
    body: str
    doc: str
    source: str
    #: The unit the result is in, for documentation and tests.
    returns: str = ""

    @property
    def signature(self) -> str:
        """``allgather_time(V, X, chip)`` with defaults shown."""
        parts = [p.name if p.default is None else f"{p.name} = {p.default}" for p in self.params]
        return f"{self.name}({', '.join(parts)})"

    @property
    def required(self) -> int:
        """How many leading arguments must be given."""
        return sum(p.default is None for p in self.params)

    def tree(self) -> ast.Expr:
        """The parsed body."""
        return parse_body(self.body)


def formula(name: str, params: str, body: str, doc: str, source: str, returns: str = "", **defaults: str) -> Formula:
    """Define a formula compactly: ``params`` is ``"V:byte X chip:chip"``."""
    parsed = []
    for spec in params.split():
        pname, _, unit = spec.partition(":")
        parsed.append(Param(pname, unit, default=defaults.get(pname)))
    return Formula(name, tuple(parsed), body, doc, source, returns)


@lru_cache(maxsize=None)
def parse_body(text: str) -> ast.Expr:
    """Parse a formula body; the library's own bodies always parse (a test checks)."""
    registry = default_registry()
    tokens, problems = tokenize(text)
    expr, _tolerance, problem = parse_claim_expression(tokens, registry.__contains__)
    if problems or problem or expr is None:
        raise ValueError(f"formula body does not parse: {text!r}")
    return expr
