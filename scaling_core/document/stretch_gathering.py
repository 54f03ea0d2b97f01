"""When a stretch is replayed gathered, and the problems a stretch that crosses problems crosses.

A stretch is gathered (``gathered.py``) on its second whole replay, or right
after a draft's first analysis (``stretches.gather_first``); one that crosses
problems is replayed gathered while those problems lie, from where the
stretch starts, where they lay when it was gathered.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scaling_core.document.gathered import Gathered, Layout, gather
from scaling_core.document.regions import ChunkScan, ProblemRegion

if TYPE_CHECKING:
    from scaling_core.document.driver import Driver, Scopes
    from scaling_core.document.stretches import Stretch


def gathered_for(
    driver: Driver,
    stretch: Stretch,
    chunks: list[tuple[int, ChunkScan]],
    index: int,
    plans: list[Scopes | None] | None,
    crossed: Sequence[ProblemRegion] | None,
) -> tuple[Gathered, Sequence[ProblemRegion]] | None:
    """The stretch's runs gathered and the problems they cross, or None if they cannot be, or not yet: a stretch is
    gathered on its second whole replay (gathering costs about a replay; typing merges new stretches that last one
    keystroke).  One that crosses problems (``plans``: its chunks' scopes now; ``crossed``: the problems, if they
    lie as when it was gathered) is gathered again when they lie elsewhere."""
    if crossed is not None:
        assert isinstance(stretch.gathered, Gathered)
        return stretch.gathered, crossed
    if stretch.gathered is None:
        stretch.gathered = True
    elif stretch.gathered is True:
        return gather_stretch(driver, stretch, chunks, index, plans)
    elif plans is not None and isinstance(stretch.gathered, Gathered):
        stretch.gathered = True  # the problems it crosses moved: replayed run by run, gathered again next time
    return (stretch.gathered, ()) if isinstance(stretch.gathered, Gathered) else None


def gather_stretch(
    driver: Driver, stretch: Stretch, chunks: list[tuple[int, ChunkScan]], index: int, plans: list[Scopes | None] | None
) -> tuple[Gathered, Sequence[ProblemRegion]] | None:
    """Gather the stretch's runs now, its first chunk at ``chunks[index]`` (``plans``: its chunks' scopes, if it
    crosses problems), and keep them on it (False if they cannot be): the gathered runs and the problems crossed."""
    stamps = dict(zip(stretch.names, stretch.inputs[0::2]))
    problems = problems_crossed(driver, chunks, index, len(stretch.scans)) if plans is not None else None
    made = gather(stretch.runs, chunks[index : index + len(stretch.scans)], stamps, plans, problems)
    stretch.gathered = made if made is not None else False
    return None if made is None else (made, problems[0] if problems is not None else ())


def crossed_as_gathered(
    driver: Driver, stretch: Stretch, chunks: list[tuple[int, ChunkScan]], index: int, count: int
) -> Sequence[ProblemRegion] | None:
    """The problems a stretch that crosses problems crosses, if it is whole and gathered, and they lie (from its
    start) where they lay when gathered: its chunks then fall into the scopes they fell into (None otherwise)."""
    gathered = stretch.gathered
    if count != len(stretch.scans) or not isinstance(gathered, Gathered):
        return None
    problems, layout = problems_crossed(driver, chunks, index, count)
    return problems if layout == gathered.layout else None


def problems_crossed(
    driver: Driver, chunks: list[tuple[int, ChunkScan]], index: int, count: int
) -> tuple[Sequence[ProblemRegion], Layout]:
    """The problems that hold part of chunks ``index`` to ``index + count`` (stretches are kept only where problems
    do not nest), and where each lies from the first chunk's start: (identifier, start, end)."""
    start = chunks[index][0]
    end = chunks[index + count][0] if index + count < len(chunks) else len(driver.interpreter.text)
    starts, problems = driver.problem_starts, driver.problems
    first = bisect.bisect_right(starts, start) - 1
    if first < 0 or problems[first].span.end <= start:
        first += 1
    crossed = problems[first : bisect.bisect_left(starts, end)]
    return crossed, tuple([(p.ident, p.span.start - start, p.span.end - start) for p in crossed])
