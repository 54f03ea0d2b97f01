"""Which names share enough characters with a spelling to be close to it, found for all names at once.

A did-you-mean note keeps the names whose ``difflib`` ratio with the unknown
spelling is at least :data:`CUTOFF` (``suggest.py``).  ``difflib`` tests a
name first by lengths (``real_quick_ratio``), then by the characters the two
share counted with repeats (``quick_ratio``), and only then works out the
ratio itself; each bound holds the next, so a name that fails one fails the
ratio.  Testing every name of a scope that way, in Python, cost ~9 ms per new
spelling in a draft of ~1,900 names (most of it the ``quick_ratio`` test,
which nearly every name passes by length), and an author typing a new name in
a claim makes a new spelling at each keystroke.

:class:`SpellingIndex` gives the names that pass ``quick_ratio`` exactly,
with big integers as bit sets over the names: for each character and count
``k``, the set of names holding that character at least ``k`` times.  A
spelling's shared characters with every name are the sum of the sets of its
own characters and counts, added bit-slice by bit-slice; each name length
needs its own least sum (``2 * shared / (len(a) + len(b)) >= CUTOFF``, as
``difflib`` computes it).  Finding them costs a few dozen operations on
integers of one bit per name: ~0.2 ms for 1,900 names.
"""

from __future__ import annotations

from collections.abc import Iterable

from scaling_core.expr.values import CUTOFF


class SpellingIndex:
    """A set of names, indexed by the characters each holds (with repeats) and by length."""

    __slots__ = ("names", "_holding", "_lengths", "_all")

    def __init__(self, names: Iterable[str]) -> None:
        self.names = list(names)
        holding: dict[tuple[str, int], list[int]] = {}
        lengths: dict[int, list[int]] = {}
        for number, name in enumerate(self.names):
            lengths.setdefault(len(name), []).append(number)
            seen: dict[str, int] = {}
            for character in name:
                count = seen[character] = seen.get(character, 0) + 1
                holding.setdefault((character, count), []).append(number)
        size = len(self.names)
        #: For each (character, k): the names holding it at least k times, a bit per name.
        self._holding = {key: _bits(numbers, size) for key, numbers in holding.items()}
        self._lengths = {length: _bits(numbers, size) for length, numbers in lengths.items()}
        self._all = (1 << size) - 1

    def sharing(self, spelling: str) -> list[str]:
        """The names whose ``difflib`` ``quick_ratio`` with ``spelling`` is at least :data:`CUTOFF` (so do
        their ``real_quick_ratio``), in no particular order."""
        size = len(spelling)
        if not size:
            return []
        # A bit-sliced count per name of the characters it shares with the spelling: slices[j] holds bit j.
        slices: list[int] = []
        seen: dict[str, int] = {}
        for character in spelling:
            count = seen[character] = seen.get(character, 0) + 1
            carry = self._holding.get((character, count), 0)
            level = 0
            while carry:
                if level == len(slices):
                    slices.append(carry)
                    break
                slices[level], carry = slices[level] ^ carry, slices[level] & carry
                level += 1
        found = 0
        at_least: dict[int, int] = {}
        for length, names in self._lengths.items():
            least = least_shared(size, length)
            if least is None:
                continue
            passing = at_least.get(least)
            if passing is None:
                passing = at_least[least] = _at_least(slices, least, self._all)
            found |= names & passing
        return [self.names[number] for number in _members(found)]


def least_shared(size: int, length: int) -> int | None:
    """The fewest characters a name of ``length`` must share with a spelling of ``size`` characters for
    ``difflib``'s ``quick_ratio`` (``2.0 * shared / (size + length)``) to reach :data:`CUTOFF`; None if none do."""
    for shared in range(1, min(size, length) + 1):
        if 2.0 * shared / (size + length) >= CUTOFF:
            return shared
    return None


def _bits(numbers: list[int], size: int) -> int:
    """The bit set of ``numbers`` (each below ``size``)."""
    found = bytearray((size + 7) >> 3)
    for number in numbers:
        found[number >> 3] |= 1 << (number & 7)
    return int.from_bytes(found, "little")


def _at_least(slices: list[int], least: int, every: int) -> int:
    """The names whose bit-sliced count (``slices[j]``: bit j of each) is at least ``least``."""
    above, equal = 0, every
    for level in range(max(len(slices), least.bit_length()) - 1, -1, -1):
        bit = slices[level] if level < len(slices) else 0
        if least >> level & 1:
            equal &= bit
        else:
            above |= equal & bit
            equal &= ~bit
    return above | equal


def _members(bits: int) -> list[int]:
    """The numbers of the set bits of ``bits``, lowest first."""
    found = []
    while bits:
        lowest = bits & -bits
        found.append(lowest.bit_length() - 1)
        bits ^= lowest
    return found
