"""Check semantics: comparisons with the tolerance policy of docs/units.md ("Tolerance").

* ``=``/``==`` pass within one unit in the claim's last printed digit,
  read as rounding (half a digit either side) or truncation (up to one
  digit beyond): ``188us`` accepts 187.5-189 µs, ``1.7e7`` 1.65e7-1.8e7.
* ``≈`` passes within max(that, the relative tolerance, default 5%).
* ``± 5%`` / ``± 2 ms`` are explicit.
* ``< ≤ > ≥`` compare exactly.  Sweeps must hold for every element.

A plain number (no unit at all) compared with a claim that has one is read
in SI base units (``2 * 4096 * 4096 = 33.5MB`` counts bytes) or in the claim's
unit as written, the unit the author carried from the line before
(``23 / 2 = 11.5ms``); either reading passes quietly.  When it misses its
claim but would match if read with a prefix the author did not write
(``8960 * 96 = 860TB``: the 96 was GB), or the claim's decimal prefix read as
binary matches (``160kB`` meaning KiB), the outcome is a warning naming the
implied unit, neither a pass nor a failure.  A plain number that neither
passes nor warns keeps no unit (it is shown as ``3200 (no unit)``) and the
outcome names the reading nearest the claim (``as GB/s: 3.2 TB/s``).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from scaling_core.records import record
from scaling_core.units import dimension
from scaling_core.units.arrays import is_array, numpy, typical
from scaling_core.units.quantity import Magnitude, Quantity, unify

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
#: A plain number that fails names its nearest reading only when that is within this factor of the claim.
_NEAREST_WITHIN = 1000.0 * (1 + 1e-9)
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


#: 10 to an exponent, as ``float(f"1e{exponent}")`` reads it (correctly rounded; ``10.0 ** n`` is not always).
_POWERS_OF_TEN = {exponent: float(f"1e{exponent}") for exponent in range(-300, 301)}


@lru_cache(maxsize=4096)  # a pure function of the text, asked for every claim: a book repeats its numbers
def last_digit_unit(text: str) -> float:
    """The value of one unit in the last printed digit of a number's text.

    ``188`` -> 1, ``1.7e7`` -> 1e6, ``0.91`` -> 0.01.  Trailing zeros of an
    integer (or of an integer mantissa) are not significant: ``140`` -> 10,
    ``32,000`` -> 1000, ``400e12`` -> 1e14; a decimal point makes them count
    (``140.`` -> 1, ``140.0`` -> 0.1), and ``0`` is precise to 1.
    Magnitude suffixes and units are applied by the caller.
    """
    if "," in text or "_" in text:
        text = text.replace(",", "").replace("_", "")
    match = _MANTISSA.match(text)
    if not match:
        return 0.0
    integer, fraction, exponent_text = match.groups()
    exponent = int(exponent_text) if exponent_text else 0
    if fraction is None:  # no decimal point: the integer's trailing zeros are placeholders
        digits = integer.lstrip("0")
        exponent += len(digits) - len(digits.rstrip("0"))
    else:
        exponent -= len(fraction)
    return _POWERS_OF_TEN.get(exponent) or float(f"1e{exponent}")  # 0.0 or inf at the extremes, never OverflowError


def mismatched_lengths(*quantities: Quantity | None) -> str | None:
    """Why the sweeps among ``quantities`` (one check's sides and tolerance) cannot be compared, or None."""
    for quantity in quantities:
        if quantity is not None and type(quantity.value) is not float:
            break
    else:
        return None  # no sweep: the commonest case, asked without a call per side
    sizes = sorted({q.value.size for q in quantities if q is not None and is_array(q.value)})
    if len(sizes) < 2:
        return None
    return f"sweeps of different lengths ({sizes[0]} and {sizes[-1]}) cannot be compared element by element"


@record
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
    #: A plain number that neither passed nor warned: the reading nearest the claim, as
    #: (unit name, or None for the claim's own unit as written; the value so read).
    nearest: tuple[str | None, Quantity] | None = None


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
    # A number with no unit at all against a claim with one: its unit comes from the claim.
    plain = unannotated and computed.dim == 0 and dim != 0
    value = computed.value
    claimed = Quantity(claimed.value, dim, claimed.free, claimed.label)
    allowance = _allowance(op, claimed, ulp, relative_tolerance, explicit_relative, explicit_absolute)
    passed = _holds(value, op, claimed.value, allowance)
    if not passed and plain and claim_unit_factor != 1.0:
        # The unit the author carried from the line before: ``23 / 2 = 11.5ms``.
        passed = _holds(value * claim_unit_factor, op, claimed.value, allowance)
        value = value * claim_unit_factor if passed else value
    computed = Quantity(value, dim, computed.free and claimed.free, computed.label)
    implied = nearest = slip = None
    if not passed and op in _EQUALITY:
        implied = _implied_prefix(computed, unannotated, claimed, op, allowance, dim, claim_unit_factor)
    if not passed and plain:
        computed = Quantity(value, 0, True, computed.label)  # shown as it is: a number with no unit
        nearest = None if implied else _nearest_reading(value, dim, claimed.value, claim_unit_factor)
    if not passed and op in _EQUALITY:
        slip = _slip(nearest[1].value if nearest else value, claimed.value)
    return Outcome(passed, implied, computed, claimed, allowance, slip, unannotated, nearest)


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
    swept = type(value) is not float and is_array(value)
    # Annotated: mypy would type the branches' union as float, and a compiled build would then refuse a sweep.
    reference: Magnitude = numpy().abs(value) if swept else abs(float(value))
    if explicit_absolute is not None:
        unify(explicit_absolute, claimed, "compare")
        width = abs(explicit_absolute.value)
        return width, width
    if explicit_relative is not None:
        return explicit_relative * reference, explicit_relative * reference
    floor = 1e-9 * reference
    largest = numpy().maximum if swept else max
    # Rounding puts the true value within half a digit either side; truncation
    # puts it up to one digit beyond the claim (away from zero).  ``≈`` widens
    # that window to the relative tolerance, never to a whole digit below: with
    # trailing zeros not significant, ``≈ 20`` must not accept 10 (a lost 2×).
    if op == "≈":
        relative = relative_tolerance * reference
        return largest(largest(ulp / 2, floor), relative), largest(largest(ulp, floor), relative)
    return largest(ulp / 2, floor), largest(ulp, floor)


def _holds(left: object, op: str, right: object, allowance: tuple[object, object]) -> bool:
    low, high = allowance
    if not (is_array(left) or is_array(right) or is_array(low) or is_array(high)):
        a, b = float(left), float(right)  # type: ignore[arg-type]
        if op in _EQUALITY:
            below, above = float(low) * (1 + 1e-9) + 1e-300, float(high) * (1 + 1e-9) + 1e-300  # type: ignore[arg-type]
            beyond = (a - b) * (-1.0 if b < 0 else 1.0)
            return -below <= beyond <= above
        return {"<": a < b, "≤": a <= b, ">": a > b, "≥": a >= b}[op]
    np = numpy()
    xs = np.asarray(left, dtype=np.float64)  # not ``a``/``b``: those are floats above, and mypyc keeps them so
    ys = np.asarray(right, dtype=np.float64)
    if op in _EQUALITY:
        lows, highs = (np.asarray(x) * (1 + 1e-9) + 1e-300 for x in allowance)
        off = (xs - ys) * np.where(ys < 0, -1.0, 1.0)
        return bool(np.all((off >= -lows) & (off <= highs)))
    results = {"<": xs < ys, "≤": xs <= ys, ">": xs > ys, "≥": xs >= ys}
    return bool(np.all(results[op]))


def _implied_prefix(
    computed: Quantity,
    unannotated: bool,
    claimed: Quantity,
    op: str,
    allowance: tuple[Magnitude, Magnitude],
    dim: int,
    claim_factor: float,
) -> str | None:
    symbol = _BASE_SYMBOL.get(dim)
    if unannotated and symbol:
        # Only prefixes authors use: ms/µs/ns for time (nobody writes ks), kB..TB/s for the rest.
        powers = (-1, -2, -3) if symbol == "s" else (1, 2, 3, 4)
        for power in powers:
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
                widened = (low * 1.024**power, high * 1.024**power)
                if _holds(computed.value, op, rescaled, widened):
                    return f"{name}{symbol} (the claim's {_DECIMAL_NAMES[power]}{symbol} read as binary)"
    return None


def _nearest_reading(
    value: Magnitude, dim: int, claimed: object, claim_factor: float
) -> tuple[str | None, Quantity] | None:
    """The reading of a plain number nearest the claim: in the claim's own unit, or with a decimal prefix."""
    a, b = typical(value), typical(claimed)
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        return None
    readings: list[tuple[str | None, float]] = []
    if 0 < claim_factor < math.inf:  # first, so it wins a tie: the unit the claim writes
        readings.append((None, claim_factor))
    symbol = _BASE_SYMBOL.get(dim)
    if symbol:  # the prefixes authors use: ns to s for times, up to P for bytes, FLOPs and rates
        powers = range(-3, 1) if symbol == "s" else range(6)
        readings += [(_DECIMAL_NAMES.get(power, "") + symbol, 1000.0**power) for power in powers]
    else:
        readings.append((dimension.base_unit_name(dim), 1.0))
    distance = math.log(a) - math.log(b)
    name, factor = min(readings, key=lambda reading: abs(distance + math.log(reading[1])))  # the first of equals
    if abs(distance + math.log(factor)) > math.log(_NEAREST_WITHIN):
        return None  # no reading comes close: naming one would not help
    return name, Quantity(value * factor, dim)


def _slip(computed: object, claimed: object) -> str | None:
    a, b = typical(computed), typical(claimed)
    if a == 0 or b == 0:
        return None
    ratio = max(a, b) / min(a, b)
    for factor, meaning in _SLIPS:
        if abs(ratio / factor - 1) < 0.06:
            return meaning
    return None
