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

from itertools import accumulate
from operator import itemgetter

from scaling_core.document.inline_scan import calc_suppressions
from scaling_core.document.pieces import MIN_LINES, contiguous, piece_at, piece_bounds, piece_cuts
from scaling_core.document.regions import CalcRegion, ChunkScan
from scaling_core.document.shift import shift_region
from scaling_core.text import Span

#: A piece's key: its text, whether it opens the block, whether it closes it, and its block's flags.
_Key = tuple[str, bool, bool, bool, bool]


class _WalkedBlock:
    """A long block's chunk scan as walked: (start in the chunk, scan) and key of each piece, and where
    (line numbers) its pieces start."""

    __slots__ = ("scan", "walked", "keys", "cuts", "start", "end", "line_count")

    def __init__(self, scan: ChunkScan, walked: list[tuple[int, ChunkScan]], keys: list[_Key], cuts: list[int]):
        self.scan, self.walked, self.keys, self.cuts = scan, walked, keys, cuts
        block = scan.regions[0]
        assert isinstance(block, CalcRegion)
        self.start, self.end, self.line_count = block.span.start, block.span.end, len(block.lines)

    def cuts_for(self, chunk: str, block: CalcRegion) -> tuple[int, list[int]]:
        """Where ``block`` (``chunk``'s, an edited version of this block) is cut, worked out again only
        between the pieces whose text is unchanged at its start and at its end; and how many pieces that is."""
        keys, walked, count = self.keys, self.walked, len(self.keys)
        head = 0
        if block.span.start == self.start:
            while head < count and chunk.startswith(keys[head][0], walked[head][0]):
                head += 1
        delta, tail = block.span.end - self.end, count
        while tail > max(head, 1) and chunk.startswith(keys[tail - 1][0], walked[tail - 1][0] + delta):
            tail -= 1
        if head == 0 and tail == count:
            return 0, [0]
        # Where a piece ends depends only on its lines past the first MIN_PIECE and on the next piece's first
        # line: the cuts up to the last piece unchanged at the start hold, and those of the unchanged end do
        # once a cut falls on one of them (the line numbers there moved by the lines the block gained).
        known = (self.cuts[tail:], len(block.lines) - self.line_count)
        return head + count - tail, piece_cuts(block.lines, self.cuts[: max(head, 1)], known)


def long_calc_block(scan: ChunkScan) -> bool:
    """Whether a chunk holds one calc block, long enough to be evaluated in pieces, and nothing else checked."""
    regions = scan.regions
    return len(regions) == 1 and type(regions[0]) is CalcRegion and regions[0].line_count >= MIN_LINES


def lone_calc_fence(text: str, end: int) -> ChunkScan:
    """The scan of ``text``: a ```` ```calc ```` fence at column 0 whose closing line ends at ``end``, then
    blank lines, without carriage returns.  The extractor's scan of it, read with one ``str.split`` (a block
    of 5,000 statements: ~1.3 ms against ~4 ms through a line index and the extractor)."""
    body_start = text.index("\n") + 1  # the opening line ends with a line break (``closed_fence``)
    closing = text.rfind("\n", 0, end) + 1
    lines: tuple[tuple[int, str], ...] = ()
    if closing > body_start:
        rows = text[body_start : closing - 1].split("\n")
        lines = tuple(zip(accumulate(map((1).__add__, map(len, rows)), initial=body_start), rows))
    region = CalcRegion(Span(0, end), lines, False, -1)
    return ChunkScan(regions=[region], calc_suppressions=calc_suppressions(lines) if "margin" in text else [])


class PieceScans:
    """The scans of long calc blocks' pieces, by their text; like ``ChunkCache``, it keeps what the latest
    extraction used."""

    __slots__ = ("_scans", "_next", "_walked", "_next_walked")

    def __init__(self) -> None:
        self._scans: dict[_Key, ChunkScan] = {}
        self._next: dict[_Key, ChunkScan] = {}
        #: Each block chunk's scan (by id, the scan kept with it) as walked: the scan, (start in the chunk,
        #: piece scan) for each piece, and the pieces' keys.
        self._walked: dict[int, _WalkedBlock] = {}
        self._next_walked: dict[int, _WalkedBlock] = {}

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
        if found is None or found.scan is not scan:
            block = scan.regions[0]
            assert isinstance(block, CalcRegion)
            cuts = self._cuts(chunk, block)
            keys, walked = [], []
            flags = (contiguous(block.lines), block.hidden) if len(cuts) > 1 else (False, False)
            for number in range(len(cuts)) if len(cuts) > 1 else ():
                start, end, following = piece_bounds(block, cuts, number)
                keys.append((chunk[start:end], number == 0, following is None, *flags))
                piece_scan = self._scans.get(keys[-1]) or self._next.get(keys[-1])
                if piece_scan is None:
                    piece = piece_at(block, cuts, number, flags[0])
                    piece_scan = ChunkScan(regions=[shift_region(piece, -start)])  # type: ignore[list-item]
                    fresh.add(id(piece_scan))
                walked.append((start, piece_scan))
            found = _WalkedBlock(scan, walked, keys, cuts)
        for key, (_start, piece_scan) in zip(found.keys, found.walked):
            self._next[key] = piece_scan
        self._next_walked[id(scan)] = found
        return found.walked or None

    def _cuts(self, chunk: str, block: CalcRegion) -> list[int]:
        """Where ``block``'s pieces start: worked out from the earlier version of it that shares the most
        pieces with it, if any."""
        if block.line_count < MIN_LINES:
            return [0]
        best: tuple[int, list[int]] = (0, [])
        for earlier in self._walked.values():
            if len(earlier.keys) > 1:
                best = max(best, earlier.cuts_for(chunk, block), key=itemgetter(0))
        return best[1] if best[0] else piece_cuts(block.lines, [0])
