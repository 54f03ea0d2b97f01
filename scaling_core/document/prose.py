"""Reading numbers the way authors write them in prose (docs/syntax.md, "Prose claims").

``1.6e14``, ``32,000``, ``21.7%``, ``3.5×10^6``, ``16 KiB``, ``6 μs``,
``1.2 TB/s``, ``435 years``, ``70B``, ``1.5 trillion``, ``11.9 million USD``,
``5×``, ``7.7M tokens per second``, ``5.3e17 FLOPs per dollar``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from scaling_core.expr.compare import last_digit_unit
from scaling_core.expr.lexer import MAGNITUDE_SUFFIXES
from scaling_core.records import record

_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
NUMBER_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "quadrillion": 1e15}

_NUMBER = (
    r"(?P<num>[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+−]?\.\d+)"
    r"(?P<exp>[eE][-+]?\d+|\s?[×x]\s?10(?:\^\{?[-+]?\d+\}?|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+))?"
    r"(?P<suffix>[kKMBT](?![\w/]))?"
)
_WORD = r"(?:[ \u00a0](?P<word>thousand|million|billion|trillion|quadrillion)\b)?"
_UNIT = (
    r"(?:[ \u00a0]?(?P<unit>%|[A-Za-zµμ][\w]*(?:/[A-Za-zµμ][\w]*)*)"
    r"(?:[ \u00a0]+per[ \u00a0]+(?P<per>[A-Za-zµμ][\w]*))?)?"
)
_TAIL = r"(?:(?P<times>[×x])(?!\w)|" + _WORD + _UNIT + r")"
#: A number with an optional unit, anchored at the end of the text searched.
TRAILING_NUMBER = re.compile(_NUMBER + _TAIL + r"$")
#: A number with an optional unit anywhere in prose.
ANY_NUMBER = re.compile(r"(?<![\w.])" + _NUMBER + _TAIL)


@record(slots=True)
class ProseNumber:
    """A prose number: its value before the unit, precision and unit text."""

    value: float
    #: One unit in the last printed digit, on the same scale as ``value``; a whole
    #: number's trailing zeros are not digits (``32,000`` -> 1000, ``140.0`` -> 0.1).
    ulp: float
    unit: str


def read_number(match: re.Match[str]) -> ProseNumber:
    """Interpret a match of :data:`TRAILING_NUMBER` or :data:`ANY_NUMBER`."""
    mantissa_text = match.group("num").replace(",", "").replace("−", "-")
    value = float(mantissa_text)
    ulp = last_digit_unit(mantissa_text)
    exp_text = match.group("exp") or ""
    scale = 1.0
    if exp_text[:1] in "eE" and exp_text:
        scale = float(f"1e{int(exp_text[1:])}")  # inf, not OverflowError, beyond float64
    elif exp_text:
        digits = exp_text.translate(_SUPER)
        digits = re.sub(r"^.*?10\^?\{?", "", digits).rstrip("}")
        scale = float(f"1e{int(digits)}")
    suffix = match.group("suffix")
    if suffix:
        scale *= MAGNITUDE_SUFFIXES[suffix]
    unit = match.group("unit") or ""
    word = match.group("word")
    if word:
        scale *= NUMBER_WORDS[word]
    elif unit in NUMBER_WORDS:
        scale *= NUMBER_WORDS[unit]
        unit = ""
    if match.group("per"):
        unit = f"{unit}/{match.group('per')}"
    return ProseNumber(value * scale, ulp * scale, unit)


@lru_cache(maxsize=4096)  # a pure function of the text, asked for every claim: a book repeats its numbers
def written_number(text: str) -> ProseNumber | None:
    """The prose number (with its unit) that ends ``text``, such as a claim's number as written, or None."""
    match = TRAILING_NUMBER.search(text)
    return None if match is None else read_number(match)


def restyle(value: float, number_text: str) -> str:
    """Write ``value`` in the style of ``number_text`` (precision, commas, exponent).

    ``restyle(25.31, "22")`` -> ``"25"``; ``restyle(1.68e7, "1.7e10")`` -> ``"1.7e7"``;
    ``restyle(31_250, "32,000")`` -> ``"31,250"``.
    """
    match = re.match(r"[-+−]?([\d,]*)(?:\.(\d+))?(?:[eE]([-+]?\d+))?", number_text)
    integer = (match.group(1) if match else "").replace(",", "")
    decimals = len(match.group(2) or "") if match else 0
    if match and match.group(3) is not None:
        digits = max(len(integer.lstrip("0")) + decimals, 2)
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    if "," in number_text:
        return f"{value:,.{decimals}f}"
    significant = max(len(integer.lstrip("0")) + decimals, 2)
    if decimals == 0 and abs(value) >= 1:
        return str(round(value))
    places = max(decimals, significant - 1 - math.floor(math.log10(abs(value)))) if value else decimals
    return f"{value:.{max(places, 0)}f}"
