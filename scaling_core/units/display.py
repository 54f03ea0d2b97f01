"""How values are shown: a readable unit and precision (docs/units.md, "Display").

``189 µs``, ``16.8 MB``, ``6.3e24 FLOP``: times and bytes pick a prefix or a
calendar unit so the number lands in a readable range; FLOP counts and rates
use scientific notation as the book does; anything else falls back to SI base
units.  ``-> unit`` overrides the choice.  A number that has no unit while the
claim it is checked against has one is shown as it is, ``3200 (no unit)``:
never in a unit it was not given.
"""

from __future__ import annotations

import math
from typing import Any

from scaling_core.units import dimension
from scaling_core.units.arrays import is_array, typical
from scaling_core.units.quantity import Quantity

SIGNIFICANT_DIGITS = 3
MAX_ARRAY_ITEMS_SHOWN = 8

_TIME = dimension.pack({"time": 1})
_BYTES = dimension.pack({"information": 1})
_BYTE_RATE = dimension.pack({"information": 1, "time": -1})
_FLOP = dimension.pack({"computation": 1})
_FLOP_RATE = dimension.pack({"computation": 1, "time": -1})
_USD = dimension.pack({"currency": 1})

#: (threshold in base units, divisor, symbol): the first row whose threshold
#: the magnitude reaches is used; rows are in descending order.
_TIME_STEPS = (
    (2 * 31557600.0, 31557600.0, "years"),
    (2 * 86400.0, 86400.0, "days"),
    (2 * 3600.0, 3600.0, "h"),
    (120.0, 60.0, "min"),
    (1.0, 1.0, "s"),
    (1e-3, 1e-3, "ms"),
    (1e-6, 1e-6, "µs"),
    (0.0, 1e-9, "ns"),
)
_DECIMAL = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))

_SCIENTIFIC_UNITS = {
    _FLOP: "FLOP",
    _FLOP_RATE: "FLOP/s",
    dimension.pack({"computation": 1, "currency": -1}): "FLOP/USD",
    dimension.pack({"computation": 1, "information": -1}): "FLOP/byte",
}


def format_number(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """A float with ``digits`` significant figures, the way the book prints numbers."""
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude < 1e6 and float(value).is_integer():
        return str(int(value))
    if 1e-3 <= magnitude < 1e5:
        decimals = max(digits - 1 - math.floor(math.log10(magnitude)), 0)
        text = f"{value:.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent)}"


def _scaled(magnitude: float, steps: tuple[tuple[float, float, str], ...]) -> tuple[float, str]:
    for threshold, divisor, symbol in steps:
        if magnitude >= threshold:
            return divisor, symbol
    return steps[-1][1], steps[-1][2]


def _decimal_prefix(magnitude: float) -> tuple[float, str]:
    for factor, prefix in _DECIMAL:
        if magnitude >= factor:
            return factor, prefix
    return 1.0, ""


def choose_unit(quantity: Quantity) -> tuple[float, str]:
    """The divisor and unit name to display ``quantity`` with."""
    magnitude = _representative(quantity.value)
    dim = quantity.dim
    if dim == _TIME:
        return _scaled(magnitude, _TIME_STEPS)
    if dim == _BYTES:
        factor, prefix = _decimal_prefix(magnitude)
        return factor, (prefix + "B") if prefix else "bytes"
    if dim == _BYTE_RATE:
        factor, prefix = _decimal_prefix(magnitude)
        return factor, f"{prefix}B/s" if prefix else "bytes/s"
    if dim == _USD:
        return 1.0, "USD"
    if dim in _SCIENTIFIC_UNITS:
        return 1.0, _SCIENTIFIC_UNITS[dim]
    return 1.0, dimension.base_unit_name(dim)


def _representative(value: object) -> float:
    return typical(value)


def _join(number: str, unit: str, label: str | None) -> str:
    if label and (not unit or unit.startswith("/")):
        unit = f"{label}{unit}" if unit.startswith("/") else f"{label} {unit}".strip()
    if unit.startswith("/"):
        return f"{number}{unit}"
    return f"{number} {unit}" if unit else number


def format_magnitude(value: Any, divisor: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """Format a scalar or array magnitude divided by ``divisor``."""
    if is_array(value):
        items = [format_number(float(v) / divisor, digits) for v in value[:MAX_ARRAY_ITEMS_SHOWN]]
        more = ", …" if value.size > MAX_ARRAY_ITEMS_SHOWN else ""
        return "[" + ", ".join(items) + more + "]"
    return format_number(float(value) / divisor, digits)


def format_quantity(quantity: Quantity, digits: int = SIGNIFICANT_DIGITS) -> str:
    """Display ``quantity`` in a readable unit: ``189 µs``, ``16.8 MB``."""
    divisor, unit = choose_unit(quantity)
    if unit.startswith("1/"):
        unit = unit[1:]
    return _join(format_magnitude(quantity.value, divisor, digits), unit, quantity.label)


def format_in_unit(quantity: Quantity, divisor: float, unit: str, digits: int = SIGNIFICANT_DIGITS) -> str:
    """Display ``quantity`` in an explicit unit (``-> days``)."""
    return _join(format_magnitude(quantity.value, divisor, digits), unit, None)


def format_unitless(value: Any, digits: int = SIGNIFICANT_DIGITS) -> str:
    """A number with no unit, said so: ``3200 (no unit)`` (never ``3.2 kB/s``)."""
    return f"{format_magnitude(value, 1.0, digits)} (no unit)"


def format_computed(computed: Quantity, claimed: Quantity | None, digits: int = SIGNIFICANT_DIGITS) -> str:
    """A check's computed side: :func:`format_unitless` when it has no unit but the claim has one."""
    if computed.free and computed.dim == 0 and claimed is not None and claimed.dim != 0:
        return format_unitless(computed.value, digits)
    return format_quantity(computed, digits)
