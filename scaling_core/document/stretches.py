"""Stretches: consecutive unchanged runs of one scope, replayed as one.

A run (``driver.py``) is replayed when its chunk is unchanged and the names
its regions mention mean what they meant.  Checking that costs a key per run,
and a keystroke replays every run of the draft: on 10,000 lines of short
sections, ~1,300 keys.  A *stretch* is a sequence of chunks whose runs were
all replayed, one after the other, in one scope (or, in a draft's first
analysis, all recorded: its first edit then replays stretches): the next
analysis replays it whole when

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

A stretch that starts at the top level may also cross problems (long
drafts have chunks holding a problem's start or end, measured: 90% of the
runs of a 2 MB draft).  Its chunks must then fall into the same scopes as
before (each run's shape, checked chunk by chunk), and every name it
mentions must mean at the top level what it meant: a problem starts with
an empty local scope, so a name a run inside it reads before any run of
the stretch mentioned it is read from the top level (or is a chip).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scaling_core.document.effects import region_bounds
from scaling_core.document.gathered import Gathered, replay_gathered
from scaling_core.document.incremental import entries, inputs_for
from scaling_core.document.regions import ChunkScan, ProblemRegion
from scaling_core.document.stretch_gathering import crossed_as_gathered, gather_stretch, gathered_for

if TYPE_CHECKING:
    from scaling_core.document.driver import Driver, Scopes

#: A stretch is formed from at least this many consecutive replayed runs (one is replayed as a run).
SHORTEST = 2
#: And of at most this many chunks: an edit breaks one stretch, whose runs are then replayed one by one and
#: gathered again (``gathered.py``) over the next keystrokes; the others are replayed whole, as gathered.
LONGEST = 128


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
    #: Whether it crosses problems (it then starts at the top level, and ``inputs`` are as the top level sees them).
    multi: bool = False
    #: Its runs gathered into pieces (``gathered.py``); True: replayed whole once, to gather next; False: they cannot be.
    gathered: Gathered | bool | None = None


def scopes_shape(scopes: Sequence[tuple[ProblemRegion | None, int, int]]) -> tuple[Any, ...]:
    """A chunk's scopes as a run's key holds them: (problem identifier or None, first region, region after the last)."""
    return tuple((p.ident if p is not None else None, low, high) for p, low, high in scopes)


class StretchBuilder:
    """Collects the runs replayed (or first recorded) one by one, in order, and makes a stretch of each unbroken
    sequence."""

    __slots__ = ("scans", "runs", "keys", "problem", "holder", "regions", "whole", "multi", "top_start")

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
        #: Whether the runs collected cross problems, and whether the first of them starts at the top level.
        self.multi = False
        self.top_start = False

    def fits(self, single: bool, problem: str | None, holder: ProblemRegion | None, chunks: int = 1) -> bool:
        """Whether a run (or a stretch of ``chunks`` chunks) that starts in ``problem`` (``single``: and stays
        there) may join the runs collected: in their one scope, or anywhere when they started at the top level
        (they then cross problems), and without making a stretch longer than :data:`LONGEST` chunks."""
        if not self.scans:
            return True
        if len(self.scans) + chunks > LONGEST:
            return False
        return (not self.multi and single and problem == self.problem and holder is self.holder) or self.top_start

    def start(self, single: bool, top_level: bool) -> bool:
        """Before adding a run (or stretch) that ``fits``: note how the runs collected are scoped.  False when it
        cannot be collected (it crosses problems from inside one), and nothing is collected then."""
        if not self.scans:
            self.multi, self.top_start = not single, top_level
            return single or top_level
        if not single:
            self.multi = True
        return True

    def add(self, scan: ChunkScan, run: Any, key: tuple[Any, ...] | None, problem: str | None, regions: int) -> None:
        """A chunk just replayed (or first recorded) as one run starting in ``problem``'s scope (``run`` None: nothing
        in it is checked)."""
        if self.scans and problem != self.problem:
            self.multi = True  # it fits (the caller asked): the runs collected cross problems
        self.problem = problem
        if run is not None:  # a stretch followed by chunks with nothing checked is still that stretch
            self.whole = None
        self.scans.append(scan)
        self.runs.append(run)
        self.keys.append(key)
        self.regions += regions

    def skip(self, scan: ChunkScan) -> None:
        """A chunk with nothing checked: part of the stretch being collected, if any (and not full: the stretch
        then ends before it, and the next run ``fits`` no more)."""
        if self.scans and len(self.scans) < LONGEST:
            self.add(scan, None, None, self.problem, 0)

    def add_stretch(self, stretch: Stretch) -> None:
        """A stretch just replayed whole (it ``fits``, and ``start`` was asked)."""
        self.whole = None if self.scans else stretch
        if self.scans and stretch.problem != self.problem:
            self.multi = True
        self.problem = stretch.problem
        self.scans += stretch.scans
        self.runs += stretch.runs
        self.keys += stretch.keys
        self.regions += stretch.regions

    def clear(self) -> None:
        """Start over (the sequence broke)."""
        self.scans, self.runs, self.keys, self.regions, self.whole = [], [], [], 0, None
        self.multi = self.top_start = False

    def stretch(self) -> Stretch | None:
        """The stretch of the runs collected so far (None if too few), and start over."""
        if self.whole is not None:
            made: Stretch | None = self.whole
            self.clear()
            return made
        runs = [run for run in self.runs if run is not None]
        made = None
        if len(runs) >= SHORTEST:
            first = _first_inputs(self.keys, self.multi)
            keyed = {key: run for key, run in zip(self.keys, self.runs) if key is not None}
            made = Stretch(
                tuple(self.scans), tuple(self.runs), tuple(self.keys), keyed, None if self.multi else self.problem,
                tuple(first), tuple([part for entry in first.values() for part in entry[1:]]), sum(run.counted for run in runs), sum(run.elements for run in runs),
                self.regions, self.multi,
            )  # fmt: skip
        self.clear()
        return made


def _first_inputs(keys: Sequence[tuple[Any, ...] | None], multi: bool) -> dict[str, Any]:
    """What each name the runs of ``keys`` mention meant where the first of them to mention it starts.

    A run's key holds, for each name, its stamp and whether it is defined in
    the scope the run starts in (``incremental.inputs_for``), and the same as
    the top level sees them when it crosses problems.  Across problems
    (``multi``) the entry is as the top level sees it: a run inside a problem
    that mentions a name first reads it from the top level or the chips (the
    problem's local scope holds only what runs of the stretch defined), so its
    stamp tells which: a chip's is tagged apart.  Each entry: (name, stamp, defined).
    """
    first: dict[str, Any] = {}
    for key in keys:
        if key is None:
            continue
        in_problem, own, top, names = key[4], key[5], key[6], key[7]
        found: Iterable[tuple[str, Any, bool]]
        if not multi or not in_problem:
            found = entries(names, own)
        elif top is not None:
            found = entries(names, top)
        else:
            found = ((name, stamp, stamp is not None and stamp[0] != "chip") for name, stamp, _ in entries(names, own))
        for entry in found:
            first.setdefault(entry[0], entry)
    return first


def same_scans(stretch: Stretch, chunks: Sequence[tuple[int, ChunkScan]], at: int) -> int:
    """How many of the stretch's scans ``chunks`` has from index ``at`` on (the same objects, in order)."""
    count = 0
    for scan, (_start, chunk) in zip(stretch.scans, chunks[at:] if at else chunks):
        if chunk is not scan:
            break
        count += 1
    return count


def collect(
    driver: Driver,
    builder: StretchBuilder,
    scan: ChunkScan,
    run: Any,
    key: tuple[Any, ...] | None,
    regions: int,
    single: bool = True,
) -> None:
    """A chunk replayed (or first recorded) as one run, starting in the current scope (``single``: staying in it):
    part of the stretch ``builder`` collects."""
    # Where the run started (its key says: the driver may have entered the chunk's next scopes since).
    problem, top_level = (key[3], not key[4]) if key is not None else (builder.problem, builder.top_start)
    if not builder.fits(single, problem, driver.current):
        keep(driver, builder)
    if builder.start(single, top_level):
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
    budget = driver.interpreter.evaluator.budget
    if count < SHORTEST or budget.stopped:
        return 0
    plans: list[Scopes | None] | None = None
    crossed: Sequence[ProblemRegion] | None = None
    if stretch.multi:
        owner = None
        crossed = crossed_as_gathered(driver, stretch, chunks, index, count)
        if crossed is None:  # its chunks' scopes, each as its run's key holds them, up to the first that differs
            plans = scopes_as_recorded(driver, chunks, index, stretch, count)
            count = len(plans)
            if count < SHORTEST:
                return 0
    else:
        holds, owner = scope_of(driver, chunks, index, count)
        if not holds or (owner.ident if owner is not None else None) != stretch.problem:
            return 0
    whole = count == len(stretch.scans)
    runs = stretch.runs if whole else stretch.runs[:count]
    elements = stretch.elements if whole else sum(run.elements for run in runs if run is not None)
    if elements and budget.room(elements):
        return 0  # as for a run (``RegionCache.get_run``)
    driver.enter(owner)
    scope = driver.interpreter.scope
    # What every name of the stretch means where it starts (a stretch cut short reads fewer: enough too).
    if inputs_for(stretch.names, scope.local, scope.top_level, scope.records) != stretch.inputs:
        return 0
    driver.poll(stretch.regions if whole else sum(len(scan.regions) for scan in stretch.scans[:count]))
    gathered = gathered_for(driver, stretch, chunks, index, plans, crossed) if whole else None
    if gathered is not None:
        replay_gathered(driver, gathered[0], chunks[index : index + count], gathered[1])
    else:
        for number, run in enumerate(runs):
            if run is None:
                continue
            scopes = plans[number] if plans is not None else None
            if scopes is not None:
                driver.enter(scopes[0][0])  # as the walk enters a chunk's first scope
            driver.replay_steps(run, chunks[index + number], scopes)
    if whole:
        driver.cache.keep_stretch(stretch)
        single = not stretch.multi
        if not builder.fits(single, stretch.problem, owner, len(stretch.scans)):
            keep(driver, builder)
        builder.start(single, owner is None)
        builder.holder = owner if single else driver.current
        builder.add_stretch(stretch)
    else:
        driver.cache.keep_runs(stretch, count)
        for number, run in enumerate(runs):
            scan = stretch.scans[number]
            scopes = plans[number] if plans is not None else None
            regions = len(scan.regions) if run is not None else 0
            collect(driver, builder, scan, run, stretch.keys[number], regions, scopes is None or len(scopes) == 1)
    return count


def scopes_as_recorded(
    driver: Driver, chunks: list[tuple[int, ChunkScan]], index: int, stretch: Stretch, count: int
) -> list[Scopes | None]:
    """The scopes of each of the first ``count`` chunks of a stretch that crosses problems, up to the first
    whose regions now fall into other scopes than its run's (None for a chunk with no run)."""
    found: list[Scopes | None] = []
    end_of_text = len(driver.interpreter.text)
    for number in range(count):
        key = stretch.keys[number]
        if key is None:
            found.append(None)
            continue
        at = index + number
        start, scan = chunks[at]
        scopes = driver.checked_scopes(scan, start, chunks[at + 1][0] if at + 1 < len(chunks) else end_of_text)
        if not scopes or scopes_shape(scopes) != key[2]:
            break
        found.append(scopes)
    return found


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


def gather_first(driver: Driver, chunks: list[tuple[int, ChunkScan]]) -> None:
    """After a draft's first analysis: gather the stretches it made, so that its first edit replays them gathered.

    Otherwise a stretch is gathered on its second whole replay: typing near the top of a 20 MB draft took
    0.88 s of CPU for the first keystroke and 1.06 s for the second (gathering), then 0.5-0.6 s each.
    """
    assert driver.cache is not None
    where = {id(scan): index for index, (_start, scan) in enumerate(chunks)}
    for stretch in driver.cache.stretches_made():
        index = where.get(id(stretch.scans[0]))
        if index is None or stretch.gathered is not None or same_scans(stretch, chunks, index) < len(stretch.scans):
            continue
        driver.poll(stretch.regions)  # an edit arrived: the next analysis replays the stretch as it is
        plans = scopes_as_recorded(driver, chunks, index, stretch, len(stretch.scans)) if stretch.multi else None
        if plans is None or len(plans) == len(stretch.scans):
            gather_stretch(driver, stretch, chunks, index, plans)
