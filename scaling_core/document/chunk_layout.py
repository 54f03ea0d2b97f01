"""The chunks of a new version of a draft, from the previous version's (issue 15).

Cutting a draft into chunks (``chunks.split_chunks``) reads all of it, and
each chunk's text is then cut out, hashed and looked up in the chunk cache:
on 10,000 lines, ~1,400 chunks on every keystroke.  The previous extraction's
chunks (where each started in the text it read, its key, its scan) tell what
did not change: the chunks the new text starts with, and those it ends with
(moved by the change in length).  Only the text between is cut again, from a
chunk start before the edit, and cutting stops where a new chunk starts where an old one of the
unchanged end starts: from there on the text, the cuts and so the chunks are
the old ones, moved.

Where cutting restarts, the cuts so far must be those of the new text: a
cut's decision reads the text from the blank line before it to its next
candidate and ~24 characters on (``chunks._cuts``), so it restarts at a chunk
start whose next chunk starts :data:`_MARGIN` characters or more before the
first changed chunk.  A draft whose chunk scale changes (``chunks.chunk_scale``),
with ``\\r`` line breaks, or edited in its front matter is cut whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from scaling_core.document.chunks import FRONT_MATTER_END, chunk_scale
from scaling_core.document.regions import ChunkScan

#: Characters a cut's decision may read past the next chunk start (a crc of 24, a look-ahead of 3).
_MARGIN = 64
#: Characters compared in one call (~0.1 ms here) when a new text is compared with the last one.
_COMPARED = 1 << 17


@dataclass(slots=True, eq=False)
class ChunkLayout:
    """The chunks an extraction read, in order: where each starts in ``text``, its key in the chunk cache (the
    hash of its text) and its scan."""

    starts: list[int]
    keys: list[int]
    scans: list[ChunkScan]
    #: The text they tile (the draft's string itself: chunks are not copied out of it to be kept).
    text: str

    @property
    def length(self) -> int:
        """The length of the text they tile."""
        return len(self.text)

    def chunk(self, index: int) -> str:
        """The text of the ``index``-th chunk."""
        starts = self.starts
        return self.text[starts[index] : starts[index + 1] if index + 1 < len(starts) else len(self.text)]


@dataclass(slots=True, eq=False)
class Reuse:
    """What a new text keeps of a layout: its first ``head`` chunks, and its chunks from ``tail`` on, moved."""

    layout: ChunkLayout
    head: int
    tail: int
    delta: int

    @property
    def start(self) -> int:
        """Where cutting restarts: the end of the chunks kept at the start."""
        return self.layout.starts[self.head] if self.head < len(self.layout.starts) else self.layout.length

    def old_chunk_at(self, start: int) -> int | None:
        """The chunk of the unchanged end that starts at ``start`` in the new text (its index), if any."""
        starts = self.layout.starts
        at = start - self.delta
        if self.tail >= len(starts) or at < starts[self.tail]:
            return None
        index = bisect.bisect_left(starts, at, self.tail)
        return index if index < len(starts) and starts[index] == at else None


def reuse(text: str, layout: ChunkLayout) -> Reuse | None:
    """What ``text`` keeps of ``layout``'s chunks, or None when it must be cut whole (see the module docstring)."""
    if "\r" in text or chunk_scale(len(text)) != chunk_scale(layout.length):
        return None
    starts, old = layout.starts, layout.text
    count = len(starts)

    def same_at(first: int, last: int, shift: int) -> bool:  # chunks first..last-1 are in ``text``, ``shift`` on
        return same_text(text, old, starts[first], starts[last] if last < count else len(old), shift)

    same = _longest_run(count, lambda first, last: same_at(first, last, 0))
    limit = starts[same] if same < count else layout.length  # where the unchanged start ends (in both texts)
    delta = len(text) - layout.length
    # The unchanged end: chunks starting at ``limit`` or later, in both texts.
    lowest = bisect.bisect_left(starts, max(limit, limit - delta), same)
    tail = count - _longest_run(count - lowest, lambda first, last: same_at(count - last, count - first, delta))
    # Restart at the start of the chunk before the last one starting _MARGIN or more before the change (or at
    # the start of the text, where cutting from the start is cutting whole: only the unchanged end is kept).
    head = max(0, bisect.bisect_right(starts, limit - _MARGIN, 0, same) - 2)
    if text.startswith("---"):  # front matter: no cut inside it (``chunks.block_starts``)
        closing = FRONT_MATTER_END.search(text, 3)
        if head == 0 or closing is None or closing.end() > starts[head]:
            return None
    return Reuse(layout, head, tail, delta)


def same_text(text: str, old: str, begin: int, end: int, shift: int, step: int = _COMPARED) -> bool:
    """Whether ``old[begin:end]`` is in ``text`` at ``begin + shift``, compared ``step`` characters at a time.

    One comparison of a long run was one C call (a slice copied, then compared) that held the interpreter
    lock throughout: a language server's event loop could not run meanwhile (half a 20 MB draft: ~21 ms), and
    the slice, up to half the draft, was a second copy of it (the server's peak RSS while typing in a 20 MB
    draft: 524-525 MB, 506-510 MB so).
    """
    for low in range(begin, end, step):
        if not text.startswith(old[low : min(low + step, end)], low + shift):
            return False
    return True


def _longest_run(count: int, same: Callable[[int, int], bool]) -> int:
    """The largest ``n <= count`` such that ``same(0, n)``, asked of runs of chunks that double while they
    agree (``same(a, b)``: chunks ``a..b-1`` are unchanged, given that those before ``a`` are).

    One comparison per run, not per chunk: a keystroke compares the text with a few long slices of the old
    one, O(log n) of them, where a slice per chunk took ~1,800 on a 20 MB draft.
    """
    done, step = 0, 1
    while done < count:
        end = min(done + step, count)
        if same(done, end):
            done, step = end, step * 2
        elif step > 1:
            step //= 2
        else:
            break
    return done
