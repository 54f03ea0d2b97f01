"""The unit registry: every spelling of every unit, loaded from ``units.toml``.

Lookups are dictionary hits: all prefixed spellings are expanded once at load
time.  Exact spellings win over prefixed ones (``min`` is minutes, not a
milli-``in``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from scaling_core.packaged_data import read_toml
from scaling_core.records import record
from scaling_core.units import dimension


@record(slots=True)
class Unit:
    """One spelling of a unit: its size in SI base units and its dimension."""

    symbol: str
    factor: float
    dim: int
    #: Count units (token, chip ...) carry a label and no dimension.
    count_label: str | None = None
    #: A diagnostic code to report as a hint when this spelling is used.
    hint: str | None = None


class UnitRegistry:
    """Resolves unit spellings; immutable after construction."""

    def __init__(self, units: dict[str, Unit]) -> None:
        self._units = units

    def lookup(self, spelling: str) -> Unit | None:
        """The unit spelled ``spelling``, or None."""
        return self._units.get(spelling)

    def __contains__(self, spelling: str) -> bool:
        return spelling in self._units

    def __iter__(self) -> Iterator[str]:
        """Every known spelling, in no particular order (for did-you-mean; see :meth:`spellings`)."""
        return iter(self._units)

    def spellings(self) -> list[str]:
        """All known spellings, sorted (for completion and documentation)."""
        return sorted(self._units)


def _expand(data: dict[str, Any]) -> dict[str, Unit]:
    prefix_sets: dict[str, dict[str, tuple[str, float]]] = {
        name: {sym: (long, float(f)) for sym, (long, f) in table.items()} for name, table in data["prefixes"].items()
    }
    exact: dict[str, Unit] = {}
    prefixed: dict[str, Unit] = {}
    for entry in data["unit"]:
        dim = dimension.pack(entry["dimension"])
        factor = float(entry["factor"])
        hint = entry.get("hint")
        symbols: list[str] = entry["symbols"]
        names: list[str] = entry.get("names", [])
        for spelling in symbols + names:
            exact[spelling] = Unit(spelling, factor, dim, None, hint)
        for set_name in entry.get("prefixes", []):
            for psym, (plong, pfactor) in prefix_sets[set_name].items():
                for sym in symbols:
                    prefixed.setdefault(psym + sym, Unit(psym + sym, factor * pfactor, dim, None, hint))
                wordy = names + [s for s in symbols if len(s) > 2 and s.isalpha() and s.islower()]
                for name in wordy:
                    prefixed.setdefault(plong + name, Unit(plong + name, factor * pfactor, dim, None, hint))
    for singular, plural in data["counts"].items():
        for spelling in (singular, plural):
            exact[spelling] = Unit(spelling, 1.0, dimension.DIMENSIONLESS, singular)
    return {**prefixed, **exact}


@lru_cache(maxsize=1)
def default_registry() -> UnitRegistry:
    """The registry built from the packaged ``units.toml`` (loaded once)."""
    data = read_toml("scaling_core.units", "data/units.toml")
    if tuple(data["dimensions"]) != dimension.BASE_DIMENSIONS:
        raise RuntimeError("units.toml dimensions do not match scaling_core.units.dimension")
    return UnitRegistry(_expand(data))
