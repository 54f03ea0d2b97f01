"""Dimensions packed into one Python int, for fast unit arithmetic.

A dimension is a vector of integer exponents over the base dimensions (time,
information, computation, currency, then the SI bases).  It is stored as the
polynomial ``sum(e_i * 2**32**i)``: multiplying quantities adds the ints,
dividing subtracts them, ``q**n`` multiplies by ``n``, and the dimensionless
dimension is ``0``.  The packing is exact while every exponent stays inside
``±2**31``; the evaluator keeps results within ``±MAX_EXPONENT`` (checked on
every power and every statement result), so no intermediate gets near that.
"""

from __future__ import annotations

from functools import lru_cache

BASE_DIMENSIONS: tuple[str, ...] = (
    "time",
    "information",
    "computation",
    "currency",
    "length",
    "mass",
    "current",
    "temperature",
    "amount",
    "luminosity",
)

#: Symbol of each base dimension's SI base unit, used when composing names.
BASE_SYMBOLS: tuple[str, ...] = ("s", "byte", "FLOP", "USD", "m", "kg", "A", "K", "mol", "cd")

_RADIX = 2**32
_HALF = 2**31
MAX_EXPONENT = 100

DIMENSIONLESS = 0


def pack(exponents: dict[str, int]) -> int:
    """Pack a mapping of base-dimension name to exponent."""
    packed = 0
    for index, name in enumerate(BASE_DIMENSIONS):
        packed += exponents.get(name, 0) * _RADIX**index
    return packed


def unpack(packed: int) -> tuple[int, ...]:
    """Return the exponent of every base dimension, in ``BASE_DIMENSIONS`` order."""
    exponents = []
    for _ in BASE_DIMENSIONS:
        digit = (packed + _HALF) % _RADIX - _HALF
        exponents.append(digit)
        packed = (packed - digit) // _RADIX
    return tuple(exponents)


@lru_cache(maxsize=4096)
def is_representable(packed: int) -> bool:
    """Whether every exponent is within the supported range."""
    exponents = unpack(packed)
    rebuilt = sum(e * _RADIX**i for i, e in enumerate(exponents))
    return rebuilt == packed and all(abs(e) <= MAX_EXPONENT for e in exponents)


def root(packed: int, degree: int) -> int | None:
    """The dimension whose ``degree``-th power is ``packed``, or None if fractional."""
    exponents = unpack(packed)
    if any(e % degree for e in exponents):
        return None
    return int(sum((e // degree) * _RADIX**i for i, e in enumerate(exponents)))


def base_unit_name(packed: int) -> str:
    """Compose an SI-base unit name such as ``byte·s/FLOP`` (empty if dimensionless)."""
    numerator: list[str] = []
    denominator: list[str] = []
    for symbol, exponent in zip(BASE_SYMBOLS, unpack(packed)):
        if exponent == 0:
            continue
        part = symbol if abs(exponent) == 1 else f"{symbol}^{abs(exponent)}"
        (numerator if exponent > 0 else denominator).append(part)
    text = "·".join(numerator) if numerator else ("1" if denominator else "")
    if denominator:
        joined = "·".join(denominator)
        text += "/" + (joined if len(denominator) == 1 else f"({joined})")
    return text
