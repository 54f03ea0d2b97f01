"""Stretches: consecutive unchanged runs of one scope, replayed as one.

A run (``driver.py``) is replayed when its chunk is unchanged and the names
its regions mention mean what they meant.  Checking that costs a key per run,
and a keystroke replays every run of the draft: on 10,000 lines of short
sections, ~1,300 keys.  A *stretch* is a sequence of chunks whose runs were
all replayed, one after the other, in one scope: the next analysis replays
it whole when

* its chunks are the same scans, in the same order, from where it starts;
* no problem starts or ends inside it (it stays in the scope it was in);
* every name its regions mention means at its start what it meant then.

The last condition is enough: a name one of its runs reads was either
defined by an earlier run of the stretch (which, replayed, defines it
again the same way) or not, and then it has the value it had at the start
of the stretch.  So each run's key comes out as it was, and replaying
the stretch is replaying its runs, in order, without looking them up.  An
edit inside a stretch breaks it; its runs are then replayed one by one,
and the unchanged ones before and after the edit form two new stretches.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scaling_core.document.effects import region_bounds
from scaling_core.document.incremental import inputs_for
from scaling_core.document.regions import ChunkScan, ProblemRegion

if TYPE_CHECKING:
    from scaling_core.document.driver import Driver

#: A stretch is formed from at least this many consecutive replayed runs (one is replayed as a run).
SHORTEST = 2


@dataclass(slots=True, eq=False)
class Stretch:
    """Consecutive chunks replayed in one scope: their scans, their runs, and what the runs read."""

    #: Each chunk's scan, in order (a chunk with nothing checked has no run: None).
    scans: tuple[ChunkScan, ...]
    runs: tuple[Any, ...]
    #: Each run's cache key (None with no run), and the runs by key (kept for the next analysis when replayed).
    keys: tuple[tuple[Any, ...] | None, ...]
    keyed: dict[tuple[Any, ...], Any]
    #: The problem it is in (its identifier; None: the top level).
    problem: str | None
    #: Every name its runs mention, and what each meant at its start (``incremental.inputs_for``).
    names: tuple[str, ...]
    inputs: tuple[Any, ...]
    #: Regions counted as reused, sweep elements spent, regions walked: the sums over its runs.
    counted: int
    elements: int
    regions: int


class StretchBuilder:
    """Collects the runs replayed one by one, in order, and makes a stretch of each unbroken sequence."""

    __slots__ = ("scans", "runs", "keys", "problem", "holder", "regions", "whole")

    def __init__(self) -> None:
        self.scans: list[ChunkScan] = []
        self.runs: list[Any] = []
        self.keys: list[tuple[Any, ...] | None] = []
        self.problem: str | None = None
        #: The problem the runs are in (two problems may have one identifier: a stretch is in one).
        self.holder: ProblemRegion | None = None
        self.regions = 0
        #: The one stretch collected, when nothing else was (it is kept as it is).
        self.whole: Stretch | None = None

    def add(self, scan: ChunkScan, run: Any, key: tuple[Any, ...] | None, problem: str | None, regions: int) -> None:
        """A chunk just replayed as one run in ``problem``'s scope (``run`` None: nothing in it is checked)."""
        if self.scans and problem != self.problem:
            self.clear()
        self.problem = problem
        if run is not None:  # a stretch followed by chunks with nothing checked is still that stretch
            self.whole = None
        self.scans.append(scan)
        self.runs.append(run)
        self.keys.append(key)
        self.regions += regions

    def skip(self, scan: ChunkScan) -> None:
        """A chunk with nothing checked: part of the stretch being collected, if any."""
        if self.scans:
            self.add(scan, None, None, self.problem, 0)

    def add_stretch(self, stretch: Stretch) -> None:
        """A stretch just replayed whole."""
        self.whole = None if self.scans else stretch
        self.problem = stretch.problem
        self.scans += stretch.scans
        self.runs += stretch.runs
        self.keys += stretch.keys
        self.regions += stretch.regions

    def clear(self) -> None:
        """Start over (the sequence broke)."""
        self.scans, self.runs, self.keys, self.regions, self.whole = [], [], [], 0, None

    def stretch(self) -> Stretch | None:
        """The stretch of the runs collected so far (None if too few), and start over."""
        if self.whole is not None:
            made: Stretch | None = self.whole
            self.clear()
            return made
        runs = [run for run in self.runs if run is not None]
        made = None
        if len(runs) >= SHORTEST:
            first: dict[str, Any] = {}
            for key in self.keys:
                if key is not None:
                    for entry in key[5]:  # the run's inputs: (name, stamp, defined in this scope)
                        first.setdefault(entry[0], entry)
            keyed = {key: run for key, run in zip(self.keys, self.runs) if key is not None}
            made = Stretch(
                tuple(self.scans), tuple(self.runs), tuple(self.keys), keyed, self.problem, tuple(first), tuple(first.values()),
                sum(run.counted for run in runs), sum(run.elements for run in runs), self.regions,
            )  # fmt: skip
        self.clear()
        return made


def same_scans(stretch: Stretch, chunks: Sequence[tuple[int, ChunkScan]], at: int) -> int:
    """How many of the stretch's scans ``chunks`` has from index ``at`` on (the same objects, in order)."""
    count = 0
    for scan, (_start, chunk) in zip(stretch.scans, chunks[at:] if at else chunks):
        if chunk is not scan:
            break
        count += 1
    return count


def collect(
    driver: Driver, builder: StretchBuilder, scan: ChunkScan, run: Any, key: tuple[Any, ...] | None, regions: int
) -> None:
    """A chunk replayed as one run, in the current scope: part of the stretch ``builder`` collects."""
    problem = driver.interpreter.scope.problem
    if builder.scans and (problem != builder.problem or driver.current is not builder.holder):
        keep(driver, builder)
    builder.holder = driver.current
    builder.add(scan, run, key, problem, regions)


def keep(driver: Driver, builder: StretchBuilder) -> None:
    """Make a stretch of the runs ``builder`` collected, for the next analysis."""
    if builder.scans:
        stretch = builder.stretch()
        if stretch is not None and driver.cache is not None:
            driver.cache.put_stretch(stretch)


def replay_stretch(driver: Driver, chunks: list[tuple[int, ChunkScan]], index: int, builder: StretchBuilder) -> int:
    """Replay the stretch starting at chunk ``index``, or its chunks up to the first that changed, if the
    cache has one that holds (``stretches.py``): how many chunks it replayed."""
    assert driver.cache is not None
    stretch = driver.cache.stretch(chunks[index][1])
    if stretch is None:
        return 0
    count = same_scans(stretch, chunks, index)
    whole = count == len(stretch.scans)
    runs = stretch.runs if whole else stretch.runs[:count]
    if count < SHORTEST:
        return 0
    holds, owner = scope_of(driver, chunks, index, count)
    budget = driver.interpreter.evaluator.budget
    if not holds or (owner.ident if owner is not None else None) != stretch.problem or budget.stopped:
        return 0
    elements = stretch.elements if whole else sum(run.elements for run in runs if run is not None)
    if elements and budget.room(elements):
        return 0  # as for a run (``RegionCache.get_run``)
    driver.enter(owner)
    scope = driver.interpreter.scope
    # What every name of the stretch means where it starts (a stretch cut short reads fewer: enough too).
    if inputs_for(stretch.names, scope.local, scope.top_level, scope.records) != stretch.inputs:
        return 0
    driver.poll(stretch.regions if whole else sum(len(scan.regions) for scan in stretch.scans[:count]))
    for number, run in enumerate(runs):
        if run is not None:
            driver.replay_steps(run, chunks[index + number], None)
    if whole:
        driver.cache.keep_stretch(stretch)
        if builder.scans and (stretch.problem != builder.problem or owner is not builder.holder):
            keep(driver, builder)
        builder.holder = owner
        builder.add_stretch(stretch)
    else:
        driver.cache.keep_runs(stretch, count)
        for number, run in enumerate(runs):
            scan = stretch.scans[number]
            collect(driver, builder, scan, run, stretch.keys[number], len(scan.regions) if run is not None else 0)
    return count


def scope_of(
    driver: Driver, chunks: list[tuple[int, ChunkScan]], index: int, count: int
) -> tuple[bool, ProblemRegion | None]:
    """Whether every region of chunks ``index`` to ``index + count`` is in one scope (as ``Driver.scopes``
    finds it: no problem starts or ends among them), and its problem."""
    problems = driver.problems
    if not problems:
        return True, None
    last = index + count - 1
    while not chunks[last][1].regions:
        last -= 1
    low = chunks[index][0] + region_bounds(chunks[index][1].regions[0])[0]
    high = chunks[last][0] + region_bounds(chunks[last][1].regions[-1])[0]
    at = bisect.bisect_right(driver.problem_starts, low) - 1
    if at >= 0 and problems[at].span.end > low:
        return problems[at].span.end > high, problems[at]
    return at + 1 >= len(problems) or problems[at + 1].span.start > high, None
