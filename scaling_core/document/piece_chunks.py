"""A long calc block walked as one chunk per piece (issue 15): its unchanged pieces replay in stretches.

``pieces.py`` cuts a long calc block into pieces, each a region of its own,
but the block is one chunk (``chunks.py`` cuts a long fence on its own).  An
edit in the block makes a new scan of that chunk, which has no recorded run,
so every piece was looked up in the region cache one by one on each
keystroke (a block of 5,000 statements: ~420 pieces, ~45% of a keystroke).
The driver walks such a chunk as one chunk per piece instead.  A piece's
scan is kept while its text is unchanged (its key also holds whether it opens
or closes the block), so the pieces before and after an edit are runs and
stretches like any chunk's (``driver.py``, ``stretches.py``): replayed whole,
and gathered.  Only the driver walks these chunks; the extraction's own
chunks, and the regions placed from them, stay as they are.
"""

from __future__ import annotations

from scaling_core.document.pieces import MIN_LINES, split_calc
from scaling_core.document.regions import CalcRegion, ChunkScan
from scaling_core.document.shift import shift_region

#: A piece's key: its text, whether it opens the block, whether it closes it, and its block's flags.
_Key = tuple[str, bool, bool, bool, bool]
_Walked = tuple[ChunkScan, list[tuple[int, ChunkScan]], list[_Key]]


def long_calc_block(scan: ChunkScan) -> bool:
    """Whether a chunk holds one calc block, long enough to be evaluated in pieces, and nothing else checked."""
    regions = scan.regions
    return len(regions) == 1 and type(regions[0]) is CalcRegion and len(regions[0].lines) >= MIN_LINES


class PieceScans:
    """The scans of long calc blocks' pieces, by their text; like ``ChunkCache``, it keeps what the latest
    extraction used."""

    __slots__ = ("_scans", "_next", "_walked", "_next_walked")

    def __init__(self) -> None:
        self._scans: dict[_Key, ChunkScan] = {}
        self._next: dict[_Key, ChunkScan] = {}
        #: Each block chunk's scan (by id, the scan kept with it) as walked: the scan, (start in the chunk,
        #: piece scan) for each piece, and the pieces' keys.
        self._walked: dict[int, _Walked] = {}
        self._next_walked: dict[int, _Walked] = {}

    def begin(self) -> None:
        """Start an extraction."""
        self._next, self._next_walked = {}, {}

    def end(self) -> None:
        """Keep only what the extraction just made used."""
        self._scans, self._next = self._next, {}
        self._walked, self._next_walked = self._next_walked, {}

    def abandon(self) -> None:
        """An extraction stopped part-way: keep the old scans and the new ones."""
        self._scans.update(self._next)
        self._walked.update(self._next_walked)
        self._next, self._next_walked = {}, {}

    def walked(self, chunk: str, scan: ChunkScan, fresh: set[int]) -> list[tuple[int, ChunkScan]] | None:
        """``scan`` (``chunk``'s, a :func:`long_calc_block`) as one chunk per piece: (start in the chunk, scan),
        or None when the block is one piece.  New pieces' scans join ``fresh`` (just edited)."""
        found = self._walked.get(id(scan)) or self._next_walked.get(id(scan))
        if found is None or found[0] is not scan:
            block = scan.regions[0]
            assert isinstance(block, CalcRegion)
            keys, walked = [], []
            for number, piece in enumerate(split_calc(block) or ()):
                start = piece.span.start
                keys.append((chunk[start : piece.span.end], number == 0, piece.following is None,
                             piece.contiguous, piece.hidden))  # fmt: skip
                piece_scan = self._scans.get(keys[-1]) or self._next.get(keys[-1])
                if piece_scan is None:
                    piece_scan = ChunkScan(regions=[shift_region(piece, -start)])  # type: ignore[list-item]
                    fresh.add(id(piece_scan))
                walked.append((start, piece_scan))
            found = (scan, walked, keys)
        for key, (_start, piece_scan) in zip(found[2], found[1]):
            self._next[key] = piece_scan
        self._next_walked[id(scan)] = found
        return found[1] or None
