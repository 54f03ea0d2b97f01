"""The calc language's syntax tree: frozen nodes, each with its exact span."""

from __future__ import annotations

from scaling_core.records import record
from scaling_core.text import Span


@record(slots=True)
class Number:
    """A numeric literal as written (``1.7e7``, ``70B``)."""

    value: float
    text: str
    span: Span


@record(slots=True)
class Name:
    """A reference to a definition, record or constant."""

    name: str
    span: Span


@record(slots=True)
class UnitFactor:
    """One unit spelling with its exponent, in a unit expression."""

    spelling: str
    exponent: int
    span: Span


@record(slots=True)
class UnitExpr:
    """A product of unit factors such as ``GB/s`` or ``USD/h``."""

    factors: tuple[UnitFactor, ...]
    span: Span

    @property
    def text(self) -> str:
        """The unit as the author wrote it, normalised (``GB/s``)."""
        numerator = [_factor_text(f, 1) for f in self.factors if f.exponent > 0]
        denominator = [_factor_text(f, -1) for f in self.factors if f.exponent < 0]
        text = "·".join(numerator) or "1"
        for part in denominator:
            text += "/" + part
        return text


def _factor_text(factor: UnitFactor, sign: int) -> str:
    power = factor.exponent * sign
    return factor.spelling if power == 1 else f"{factor.spelling}^{power}"


@record(slots=True)
class WithUnit:
    """An expression followed by a unit: ``2.7 USD/h``, ``(2**30) byte``."""

    operand: Expr
    unit: UnitExpr
    span: Span


@record(slots=True)
class Unary:
    """Negation or unary plus."""

    op: str
    operand: Expr
    span: Span


@record(slots=True)
class Binary:
    """A binary operation ``+ - * / **``."""

    op: str
    left: Expr
    right: Expr
    span: Span
    op_span: Span


@record(slots=True)
class Call:
    """A call of a built-in function."""

    name: str
    args: tuple[Expr, ...]
    span: Span
    name_span: Span


@record(slots=True)
class Field:
    """Field access on a record: ``h100.hbm_bw``."""

    target: Expr
    name: str
    span: Span
    name_span: Span


@record(slots=True)
class Index:
    """A record indexed by a string: a slice of a chip, ``tpu_v5p["4x4x4"]``, or an axis of a slice."""

    target: Expr
    key: str
    span: Span
    key_span: Span


@record(slots=True)
class ListExpr:
    """A sweep: ``[1, 8, 64, 512]``."""

    items: tuple[Expr, ...]
    span: Span


@record(slots=True)
class Shape:
    """A shape with a dtype, the book's notation: ``bf16[8, 128, 8192]``."""

    dtype: str
    dims: tuple[Expr, ...]
    span: Span


@record(slots=True)
class Convert:
    """A conversion inside parentheses: ``(1 GiB -> GB)``; its value is the converted one."""

    operand: Expr
    unit: UnitExpr
    span: Span


Expr = Number | Name | WithUnit | Unary | Binary | Call | Field | Index | ListExpr | Shape | Convert


@record(slots=True)
class Tolerance:
    """``± 5%`` (relative, ``relative`` set) or ``± 2 ms`` (``absolute`` set)."""

    span: Span
    relative: float | None = None
    absolute: Expr | None = None


@record(slots=True)
class Definition:
    """``name = expr [-> unit]``."""

    name: str
    name_span: Span
    expr: Expr
    convert: UnitExpr | None
    span: Span


@record(slots=True)
class Show:
    """``expr [-> unit]``: a value shown in the margin."""

    expr: Expr
    convert: UnitExpr | None
    span: Span


@record(slots=True)
class Check:
    """``left OP right [± tol]``: a claim to verify."""

    left: Expr
    op: str
    right: Expr
    tolerance: Tolerance | None
    span: Span
    op_span: Span


@record(slots=True)
class Import:
    """``import "other.md"``."""

    path: str
    span: Span
    path_span: Span


Statement = Definition | Show | Check | Import
