"""Quantity: a float64 (or NumPy array) magnitude in SI base units plus a dimension.

The unannotated-arithmetic rule (docs/units.md, "Unannotated arithmetic") lives here.  A quantity is
*free* when its numerator carries no unit: it is then an unknown quantity
``U`` times its dimension, and ``U`` is inferred where it meets a quantity
with units (in ``+``, ``-``, comparisons and conversions).  In a product, a
unitless factor next to a factor with units is a plain scalar; in a quotient
freedom follows the numerator.  So ``2*B*D*F / h100.flops_bf16`` compared
with ``1.2 ms`` reads the count as FLOP, while ``2 byte * D * F / flops``
compared with a time is a mismatch.
"""

from __future__ import annotations

from typing import Any

from scaling_core.units import dimension

Magnitude = Any  # float or numpy.ndarray of float64


class UnitError(Exception):
    """Incompatible units met in an operation (internal; becomes a diagnostic)."""

    def __init__(self, left: Quantity, right: Quantity, operation: str) -> None:
        super().__init__(operation)
        self.left = left
        self.right = right
        self.operation = operation


class Quantity:
    """A magnitude in SI base units with a packed dimension.

    ``free`` marks an unannotated numerator whose unit is inferred on
    comparison; ``label`` is a count annotation (``token``) shown on display.
    """

    __slots__ = ("value", "dim", "free", "label")

    def __init__(self, value: Magnitude, dim: int = 0, free: bool = False, label: str | None = None):
        self.value = value
        self.dim = dim
        self.free = free
        self.label = label

    def __repr__(self) -> str:
        flag = " free" if self.free else ""
        return f"Quantity({self.value!r}, {dimension.base_unit_name(self.dim) or '1'}{flag})"

    def __mul__(self, other: Quantity) -> Quantity:
        label = self.label if other.label is None else (other.label if self.label is None else None)
        return Quantity(self.value * other.value, self.dim + other.dim, self.free and other.free, label)

    def __truediv__(self, other: Quantity) -> Quantity:
        label = None if self.label == other.label else self.label
        return Quantity(self.value / other.value, self.dim - other.dim, self.free, label)

    def __add__(self, other: Quantity) -> Quantity:
        dim, free = unify(self, other, "add")
        return Quantity(self.value + other.value, dim, free, self.label or other.label)

    def __sub__(self, other: Quantity) -> Quantity:
        dim, free = unify(self, other, "subtract")
        return Quantity(self.value - other.value, dim, free, self.label or other.label)

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.dim, self.free, self.label)

    def power(self, exponent: float) -> Quantity:
        """Raise to a finite dimensionless exponent; units need an integer exponent or the reciprocal of one.

        Raises ZeroDivisionError for zero to a negative power (the caller reports it).
        """
        if self.dim and not exponent.is_integer():
            degree = round(1 / exponent)  # (x s²)^0.5 is a square root; (2 s)^2.5 has no unit
            root = dimension.root(self.dim, degree) if degree else None
            if root is None or abs(1 / degree - exponent) > 1e-12:
                raise UnitError(self, self, "power")
            return Quantity(self.value**exponent, root, self.free, None)
        return Quantity(self.value**exponent, self.dim * int(exponent) if self.dim else 0, self.free, None)

    def with_dim(self, dim: int) -> Quantity:
        """This quantity read with dimension ``dim`` (used after inference)."""
        return Quantity(self.value, dim, False, self.label)


def unify(left: Quantity, right: Quantity, operation: str) -> tuple[int, bool]:
    """The dimension two operands share, inferring a free side; raises UnitError."""
    if left.dim == right.dim:
        return left.dim, left.free and right.free
    if left.free and not right.free:
        return right.dim, False
    if right.free and not left.free:
        return left.dim, False
    if left.free and right.free:
        return left.dim, True
    raise UnitError(left, right, operation)


def convert_dim(quantity: Quantity, target_dim: int) -> Quantity:
    """Read ``quantity`` in ``target_dim``, inferring a free numerator; raises UnitError."""
    if quantity.dim == target_dim:
        return quantity
    if quantity.free:
        return quantity.with_dim(target_dim)
    raise UnitError(quantity, Quantity(1.0, target_dim), "convert")


def scalar(value: float) -> Quantity:
    """A plain unannotated number (free: its unit may be inferred)."""
    return Quantity(value, 0, True, None)
