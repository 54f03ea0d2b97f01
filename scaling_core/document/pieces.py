"""Long calc blocks in pieces: an edit re-evaluates one piece of statements and its dependents, not the block.

A calc block is one region: its statements see each other's names in
order, and the region cache reuses it only whole.  A block of thousands of
statements would then be evaluated again on every keystroke inside it.  So a
block of at least :data:`MIN_LINES` lines is cut into pieces, each a region
of its own (keyed by its text and the values of the names it mentions, like
any region): an edit re-evaluates its piece, and the pieces whose inputs it
changed.

A piece starts at a line that starts a definition (``name = ...``), which
always starts a statement (the lexer ends any open bracket there), so the
pieces' statements are the block's statements.  Where a cut falls depends
only on the lines near it (a hash of the line, with a minimum and maximum
piece length), so typing in one piece leaves the others' text, and their
cache keys, unchanged.  Evaluating a piece gives what evaluating the whole
block gives for its statements: the same tokens (``lexer.tokenize_lines``
with ``following``), the same scope (the earlier pieces' definitions are in
it), the same diagnostics.
"""

from __future__ import annotations

import re
import zlib
from operator import itemgetter

from scaling_core.document.regions import CalcRegion
from scaling_core.records import record
from scaling_core.text import Span

#: Blocks shorter than this are one region.
MIN_LINES = 96
#: A piece has at least this many lines, and is cut at the next definition after :data:`MAX_PIECE` lines.
MIN_PIECE = 12
MAX_PIECE = 64
#: A definition line whose hash is 0 modulo this starts a piece (after :data:`MIN_PIECE` lines): ~1 in 24.
_CUT_EVERY = 24
_DEFINITION_START = re.compile(r"[ \t]*[^\W\d]\w*[ \t]*=(?!=)")


@record(slots=True)
class CalcPiece(CalcRegion):
    """Consecutive statements of a long calc block, evaluated as a region of their own."""

    #: Where the block's next line starts (the next piece's first statement), or None for the last piece.
    following: int | None
    #: Whether the block's lines are one run of text, one line-break character apart (the lexer's fast path).
    contiguous: bool


def split_calc(block: CalcRegion) -> list[CalcPiece] | None:
    """``block`` in pieces, or None when it is short enough to stay one region."""
    if block.line_count < MIN_LINES or isinstance(block, CalcPiece):
        return None
    lines = block.lines
    cuts = piece_cuts(lines, [0])
    return pieces_at(block, cuts, contiguous(lines)) if len(cuts) > 1 else None


def piece_cuts(
    lines: tuple[tuple[int, str], ...], cuts: list[int], known: tuple[list[int], int] = ([], 0)
) -> list[int]:
    """The line numbers where ``lines``' pieces start, going on from ``cuts`` (the first ones, already known).

    ``known`` is (the line numbers where pieces started in an earlier version of the block, past the last
    line that changed; how many lines the block gained since): a cut falling on one of them is followed by
    the rest of them, moved, since where a piece ends depends only on its own lines and the next one's first.
    """
    later, moved = known
    resumes = {number + moved: at for at, number in enumerate(later)}
    number, count = cuts[-1] + MIN_PIECE, len(lines)
    while number < count:  # each piece at least MIN_PIECE lines long: the lines before are not read
        line = lines[number][1]
        if _DEFINITION_START.match(line) is not None and (
            number - cuts[-1] >= MAX_PIECE or not zlib.crc32(line.encode("utf-8", "surrogatepass")) % _CUT_EVERY
        ):
            if number in resumes:
                return cuts + [cut + moved for cut in later[resumes[number] :]]
            cuts.append(number)
            number += MIN_PIECE
        else:
            number += 1
    return cuts


def contiguous(lines: tuple[tuple[int, str], ...]) -> bool:
    """Whether ``lines`` are one run of text, one line-break character apart (the lexer's fast path)."""
    # Lines never overlap and a line break (one character or more) follows each, so they are one run of text,
    # one character apart, exactly when their lengths and breaks add up to where the last one starts.
    length = sum(map(len, map(itemgetter(1), lines))) - len(lines[-1][1]) + len(lines) - 1
    return lines[-1][0] - lines[0][0] == length


def piece_bounds(block: CalcRegion, cuts: list[int], number: int) -> tuple[int, int, int | None]:
    """Piece ``number`` of ``block`` cut at ``cuts``: where it starts, where it ends, where the next starts."""
    lines = block.lines
    begin = block.span.start if number == 0 else lines[cuts[number]][0]
    following = lines[cuts[number + 1]][0] if number + 1 < len(cuts) else None
    return begin, following if following is not None else block.span.end, following


def piece_at(block: CalcRegion, cuts: list[int], number: int, contiguous: bool) -> CalcPiece:
    """Piece ``number`` of ``block`` cut at ``cuts``."""
    begin, end, following = piece_bounds(block, cuts, number)
    last = cuts[number + 1] if number + 1 < len(cuts) else len(block.lines)
    return CalcPiece(Span(begin, end), block.lines[cuts[number] : last], block.hidden, -1, following, contiguous)


def pieces_at(block: CalcRegion, cuts: list[int], contiguous: bool) -> list[CalcPiece]:
    """``block``'s pieces, cut at ``cuts``."""
    return [piece_at(block, cuts, number, contiguous) for number in range(len(cuts))]
