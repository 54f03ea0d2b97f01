"""Check semantics: comparisons with the tolerance policy of docs/units.md ("Tolerance").

* ``=``/``==`` pass within one unit in the claim's last printed digit,
  read as rounding (half a digit either side) or truncation (up to one
  digit beyond): ``188us`` accepts 187.5-189 µs, ``1.7e7`` 1.65e7-1.8e7.
* ``≈`` passes within max(that, the relative tolerance, default 5%).
* ``± 5%`` / ``± 2 ms`` are explicit.
* ``< ≤ > ≥`` compare exactly.  Sweeps must hold for every element.

When a unitless side misses its claim but would match if read with a prefix
the author did not write (``8960 * 96 = 860TB``: the 96 was GB), or the claim's
decimal prefix read as binary matches (``160kB`` meaning KiB), the outcome is
a warning naming the implied unit, neither a pass nor a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scaling_core.units import dimension
from scaling_core.units.arrays import is_array, numpy, typical
from scaling_core.units.quantity import Quantity, unify

_MANTISSA = re.compile(r"^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_EQUALITY = ("=", "==", "≈")
_DECIMAL_NAMES = {1: "k", 2: "M", 3: "G", 4: "T", 5: "P", -1: "m", -2: "µ", -3: "n"}
_BINARY_NAMES = {1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi"}
_BASE_SYMBOL = {
    dimension.pack({"information": 1}): "B",
    dimension.pack({"time": 1}): "s",
    dimension.pack({"computation": 1}): "FLOP",
    dimension.pack({"information": 1, "time": -1}): "B/s",
    dimension.pack({"computation": 1, "time": -1}): "FLOP/s",
}
#: Ratios that betray a classic slip, with what they usually mean.
_SLIPS = (
    (2.0, "a factor of 2 (keys and values? one-way vs bidirectional? bf16 bytes?)"),
    (1000.0, "a factor of 1000 (a unit prefix slip?)"),
    (1e6, "a factor of a million (a unit prefix slip?)"),
    (3600.0, "a factor of 3600 (seconds vs hours?)"),
    (1024.0, "a factor of 1024 (binary vs decimal prefix?)"),
    (8.0, "a factor of 8 (bits vs bytes?)"),
    (60.0, "a factor of 60 (seconds vs minutes?)"),
    (24.0, "a factor of 24 (hours vs days?)"),
)


def last_digit_unit(text: str) -> float:
    """The value of one unit in the last printed digit of a number's text.

    ``188`` -> 1, ``1.7e7`` -> 1e6, ``0.91`` -> 0.01, ``32,000`` -> 1.
    Magnitude suffixes and units are applied by the caller.
    """
    match = _MANTISSA.match(text.replace(",", "").replace("_", ""))
    if not match:
        return 0.0
    decimals = len(match.group(2) or "")
    exponent = int(match.group(3) or 0)
    return float(f"1e{exponent - decimals}")  # 0.0 or inf at the extremes, never OverflowError


@dataclass(frozen=True)
class Outcome:
    """The result of one check."""

    passed: bool
    #: Set when the check only holds with a prefix the author did not write.
    implied: str | None
    computed: Quantity
    claimed: Quantity
    #: How far below and above the claim the value may lie, in SI base units.
    allowance: tuple[object, object]
    slip: str | None
    #: The computed side carried no unit of its own (its unit was inferred).
    unannotated: bool = False


def compare(
    computed: Quantity,
    op: str,
    claimed: Quantity,
    *,
    ulp: float,
    relative_tolerance: float,
    explicit_relative: float | None = None,
    explicit_absolute: Quantity | None = None,
    claim_unit_factor: float = 1.0,
) -> Outcome:
    """Compare ``computed OP claimed``; raises UnitError when units conflict.

    ``ulp`` is one unit in the claim's last printed digit, in SI base units.
    """
    dim, _free = unify(computed, claimed, "compare")
    unannotated = computed.free
    computed = Quantity(computed.value, dim, computed.free and claimed.free, computed.label)
    claimed = Quantity(claimed.value, dim, claimed.free, claimed.label)
    allowance = _allowance(op, claimed, ulp, relative_tolerance, explicit_relative, explicit_absolute)
    passed = _holds(computed.value, op, claimed.value, allowance)
    implied = None
    slip = None
    if not passed and op in _EQUALITY:
        implied = _implied_prefix(computed, unannotated, claimed, op, allowance, dim, claim_unit_factor)
        slip = _slip(computed.value, claimed.value)
    return Outcome(passed, implied, computed, claimed, allowance, slip, unannotated)


def _allowance(
    op: str,
    claimed: Quantity,
    ulp: float,
    relative_tolerance: float,
    explicit_relative: float | None,
    explicit_absolute: Quantity | None,
) -> tuple[object, object]:
    """How far below and above the claim the computed value may lie (magnitudes)."""
    value = claimed.value
    reference = numpy().abs(value) if is_array(value) else abs(float(value))
    if explicit_absolute is not None:
        unify(explicit_absolute, claimed, "compare")
        width = abs(explicit_absolute.value)
        return width, width
    if explicit_relative is not None:
        return explicit_relative * reference, explicit_relative * reference
    floor = 1e-9 * reference
    largest = numpy().maximum if is_array(reference) else max
    if op == "≈":
        width = largest(largest(ulp, floor), relative_tolerance * reference)
        return width, width
    # Rounding puts the true value within half a digit either side; truncation
    # puts it up to one digit beyond the claim (away from zero).
    return largest(ulp / 2, floor), largest(ulp, floor)


def _holds(left: object, op: str, right: object, allowance: tuple[object, object]) -> bool:
    if not (is_array(left) or is_array(right) or is_array(allowance[0]) or is_array(allowance[1])):
        a, b = float(left), float(right)  # type: ignore[arg-type]
        if op in _EQUALITY:
            below, above = (float(x) * (1 + 1e-9) + 1e-300 for x in allowance)  # type: ignore[arg-type]
            beyond = (a - b) * (-1.0 if b < 0 else 1.0)
            return -below <= beyond <= above
        return {"<": a < b, "≤": a <= b, ">": a > b, "≥": a >= b}[op]
    np = numpy()
    a = np.asarray(left, dtype=np.float64)
    b = np.asarray(right, dtype=np.float64)
    if op in _EQUALITY:
        below, above = (np.asarray(x) * (1 + 1e-9) + 1e-300 for x in allowance)
        beyond = (a - b) * np.where(b < 0, -1.0, 1.0)
        return bool(np.all((beyond >= -below) & (beyond <= above)))
    results = {"<": a < b, "≤": a <= b, ">": a > b, "≥": a >= b}
    return bool(np.all(results[op]))


def _implied_prefix(
    computed: Quantity,
    unannotated: bool,
    claimed: Quantity,
    op: str,
    allowance: tuple[object, object],
    dim: int,
    claim_factor: float,
) -> str | None:
    symbol = _BASE_SYMBOL.get(dim)
    if unannotated and symbol:
        for power in (1, 2, 3, 4, -1, -2, -3):
            for base, names in ((1000.0, _DECIMAL_NAMES), (1024.0, _BINARY_NAMES)):
                if power not in names:
                    continue
                scaled = computed.value * base**power
                if _holds(scaled, op, claimed.value, allowance):
                    return f"{names[power]}{symbol}"
    if symbol in ("B", "B/s"):
        for power, name in _BINARY_NAMES.items():
            if abs(claim_factor / 1000.0**power - 1) < 1e-9:
                rescaled = claimed.value * 1.024**power
                low, high = allowance
                widened = (low * 1.024**power, high * 1.024**power)  # type: ignore[operator]
                if _holds(computed.value, op, rescaled, widened):
                    return f"{name}{symbol} (the claim's {_DECIMAL_NAMES[power]}{symbol} read as binary)"
    return None


def _slip(computed: object, claimed: object) -> str | None:
    a, b = typical(computed), typical(claimed)
    if a == 0 or b == 0:
        return None
    ratio = max(a, b) / min(a, b)
    for factor, meaning in _SLIPS:
        if abs(ratio / factor - 1) < 0.06:
            return meaning
    return None
