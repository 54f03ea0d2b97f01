"""The region driver: every region in document order, entering and leaving problem scopes, reusing what it can.

A region the cache knows (same text, same problem, same values of the names
it mentions) is not evaluated: its recorded effects are applied again where
it now starts.  A claim or inline value naming something not defined above
it waits for the end of its scope (``forward.py``).  A long calc block is
evaluated in pieces of statements (``pieces.py``), each a region of its own.

With a cache, the regions of one chunk in one scope form a *run*, the unit
an edit usually leaves alone: a run whose chunk is unchanged and whose names
mean what they meant is replayed as a whole (its recorded steps: the effects
its regions added, and the claims that waited), so a keystroke costs one
replay per run instead of one per region.  A run that cannot be replayed is
walked region by region, as above, and recorded for the next analysis.
Consecutive runs replayed in one scope form a *stretch*, replayed as one by
the next analysis (``stretches.py``): a keystroke costs a few stretches.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from scaling_core.document.effects import Effects, Results, Run, region_bounds, region_start
from scaling_core.document.forward import ForwardReferences, Waiting, looks_below, waits
from scaling_core.document.incremental import RegionCache, _incomplete, identifiers, inputs_for, region_key
from scaling_core.document.interpret import Interpreter
from scaling_core.document.pieces import CalcPiece, split_calc
from scaling_core.document.regions import (
    CalcRegion,
    ChunkScan,
    CodeSpanRegion,
    ProblemRegion,
    Region,
)
from scaling_core.document.stretches import StretchBuilder, collect, gather_first, keep, replay_stretch, scopes_shape

#: ``cancelled`` is polled every this many regions (a poll costs ~0.1 µs, a replayed region ~14 µs).
STOP_POLL_REGIONS = 64


#: A chunk's regions by the problem they are in: (problem or None, first index, index after the last).
Scopes = list[tuple[ProblemRegion | None, int, int]]


class Driver:
    """Walks one analysis's regions (see the module docstring)."""

    def __init__(
        self,
        interpreter: Interpreter,
        problems: list[ProblemRegion],
        code_spans: bool,
        cache: RegionCache | None,
        check_stop: Callable[[], None] | None,
    ) -> None:
        self.interpreter = interpreter
        self.problems = problems
        self.problem_starts = [p.span.start for p in problems]
        #: Problems overlap only when a broken marker nests them (rare): then each region
        #: belongs to the outermost problem holding it, as a single pass over the text gives.
        self.nested = any(b.span.start < a.span.end for a, b in zip(problems, problems[1:]))
        self.code_spans = code_spans
        self.cache = cache
        self.check_stop = check_stop
        self.forward = ForwardReferences(interpreter, cache)
        self.current: ProblemRegion | None = None
        #: Regions walked or replayed so far (for polling ``check_stop``).
        self.walked = 0
        #: While a run is recorded: its key, its chunk's start, its steps so far, the region-cache
        #: entries it used, whether it can be replayed, and where the current slice of the results began.
        self.key: tuple[Any, ...] = ()
        self.chunk_start = 0
        self.steps: list[Effects | Waiting | tuple[int, tuple[Any, ...]]] | None = None
        self.used: dict[tuple[Any, ...], Effects] | None = None
        self.recordable = True
        self.marks = (0, 0, 0, 0, 0, 0, 0)
        self.elements = 0
        self.run: Run | None = None  # the run the latest :meth:`replay` found

    # -- the walk ------------------------------------------------------------------
    def walk(self, chunks: list[tuple[int, ChunkScan]], placed: Callable[[int, ChunkScan], list[Region]]) -> None:
        """Every region of ``chunks`` ((start, scan relative to it)); ``placed`` puts a chunk's regions in place."""
        ends = [start for start, _scan in chunks[1:]] + [len(self.interpreter.text)]
        budget = self.interpreter.evaluator.budget
        cache = self.cache
        stretches = cache is not None and not self.nested
        # The first analysis's runs make stretches at once (its first edit then replays stretches).  Later
        # on, a run is recorded because a name it reads changed, and may well change again: in a stretch,
        # it would break the stretch on each such edit, so only replayed runs join one.
        first = cache is not None and cache.first
        builder, after = StretchBuilder(), 0
        for index, ((start, scan), end) in enumerate(zip(chunks, ends)):
            if index < after:
                continue  # replayed with a stretch
            if not scan.regions:
                builder.skip(scan)
                continue
            if stretches and (replayed := replay_stretch(self, chunks, index, builder)):
                after = index + replayed
                continue
            scopes = self.checked_scopes(scan, start, end)
            if not scopes or budget.stopped:
                builder.clear() if budget.stopped else builder.skip(scan)
                continue  # out of time: E003 says where
            self.poll(scopes[-1][2] - scopes[0][1])
            self.enter(scopes[0][0])
            # A chunk just edited has no recorded run (nor will it get one, see :meth:`record`).
            edited = cache is None or (id(scan) in cache.chunks.fresh and cache.chunks.reused > 0)
            if edited or not self.replay(scan, start, scopes):
                recorded = self.record(scan, start, scopes, placed(start, scan))
                if recorded is not None and stretches and first:
                    collect(self, builder, scan, recorded, self.key, scopes[-1][2] - scopes[0][1], len(scopes) == 1)
                else:
                    keep(self, builder)
            elif stretches:
                collect(self, builder, scan, self.run, self.key, scopes[-1][2] - scopes[0][1], len(scopes) == 1)
            else:
                keep(self, builder)
        keep(self, builder)
        self.forward.finish()
        if first and stretches and not budget.stopped:
            gather_first(self, chunks)  # after the claims that waited are resolved: a stretch settles them

    def checked_scopes(self, scan: ChunkScan, start: int, end: int) -> Scopes:
        """The chunk's regions by scope, leaving out a scope with nothing checked (entering it changes nothing)."""
        return [(p, low, high) for p, low, high in self.scopes(scan, start, end) if self.checked(scan, low, high)]

    def scopes(self, scan: ChunkScan, start: int, end: int) -> Scopes:
        """The chunk's regions by the problem they are in: (problem, first index, index after the last)."""
        problems, count = self.problems, len(scan.regions)
        if not problems:
            return [(None, 0, count)]
        if self.nested:
            return self.outermost_scopes(scan, start)
        at = bisect.bisect_right(self.problem_starts, start) - 1
        if at < 0 or problems[at].span.end <= start:
            at += 1  # the first problem that may hold part of the chunk
        overlapping = []
        while at < len(problems) and problems[at].span.start < end:
            overlapping.append(problems[at])
            at += 1
        if not overlapping:
            return [(None, 0, count)]
        only = overlapping[0]
        if len(overlapping) == 1 and only.span.start <= start and only.span.end >= end:
            return [(only, 0, count)]
        starts = scan.starts
        if starts is None:
            starts = scan.starts = [region_start(region) for region in scan.regions]
        found: Scopes = []
        at = 0
        for problem in overlapping:  # the regions before it (top level), then those inside it
            first = max(at, bisect.bisect_left(starts, problem.span.start - start))
            last = max(first, bisect.bisect_left(starts, problem.span.end - start))
            if first > at:
                found.append((None, at, first))
            if last > first:
                found.append((problem, first, last))
            at = last
        if at < count:
            found.append((None, at, count))
        return found

    def outermost_scopes(self, scan: ChunkScan, start: int) -> Scopes:
        """:meth:`scopes` when problems nest: each region in the outermost problem holding it."""
        starts = scan.starts
        if starts is None:
            starts = scan.starts = [region_start(region) for region in scan.regions]
        found: Scopes = []
        for index, offset in enumerate(starts):
            position = start + offset
            owner = next((p for p in self.problems if p.span.start <= position < p.span.end), None)
            if found and found[-1][0] is owner:
                found[-1] = (owner, found[-1][1], index + 1)
            else:
                found.append((owner, index, index + 1))
        return found or [(None, 0, len(scan.regions))]

    def enter(self, problem: ProblemRegion | None) -> None:
        """Enter ``problem``'s scope (None: the top level), leaving the current one."""
        if problem is not self.current:
            if self.current is not None:
                self.forward.leave_problem()
            self.current = problem
            self.interpreter.scope.enter(problem.ident if problem is not None else None)

    def poll(self, regions: int) -> None:
        """Ask ``check_stop`` first, then once per :data:`STOP_POLL_REGIONS` regions walked; count ``regions``."""
        walked, every = self.walked, STOP_POLL_REGIONS
        if self.check_stop is not None and (not walked or walked // every != (walked + regions) // every):
            self.check_stop()
        self.walked = walked + regions

    # -- runs ----------------------------------------------------------------------
    def active(self, region: Region) -> bool:
        """Whether ``region`` is checked with these settings: a code span without a role may not be.  (LaTeX
        math is found only with the ``latex_math`` setting: ``inline_scan.py``.)"""
        return region.role or self.code_spans if isinstance(region, CodeSpanRegion) else True

    def checked(self, scan: ChunkScan, low: int, high: int) -> bool:
        """Whether any of the regions ``low:high`` of a chunk is checked with these settings (remembered on its scan)."""
        key = (self.code_spans, low, -high)
        if key not in scan.names:
            scan.names[key] = () if any(self.active(r) for r in scan.regions[low:high]) else None
        return scan.names[key] is not None

    def active_names(self, scan: ChunkScan, start: int, low: int, high: int) -> tuple[str, ...]:
        """Every name the checked regions ``low:high`` of a chunk mention (remembered on its scan)."""
        key = (self.code_spans, low, high)
        known = scan.names.get(key)
        if known is not None:
            return known
        text, found = self.interpreter.text, {}
        for region in scan.regions[low:high]:
            if self.active(region):
                found.update(
                    dict.fromkeys(identifiers(text[start + region_start(region) : start + region_bounds(region)[1]]))
                )
        names = scan.names[key] = tuple(found)
        return names

    def replay(self, scan: ChunkScan, start: int, scopes: Scopes) -> bool:
        """Replay the run (the chunk's regions in ``scopes``) if the cache has it with these inputs: whether it did.

        Its key: its chunk (by scan), its regions by scope, the scope it starts
        in, and what the names it mentions mean now (and at the top level, for
        the problems it enters: they start empty).
        """
        assert self.cache is not None
        scope = self.interpreter.scope
        names = self.active_names(scan, start, scopes[0][1], scopes[-1][2])
        local = scope.local
        inputs = inputs_for(names, local, scope.top_level, scope.records)
        top = inputs_for(names, None, scope.top_level, scope.records) if len(scopes) > 1 else None
        shape = scopes_shape(scopes)
        key = ("run", id(scan), shape, scope.problem, local is not None, inputs, top, names)
        run = self.cache.get_run(key, scan)
        self.key, self.run = key, run  # for the run's record, or a stretch
        if run is None:
            return False
        self.replay_steps(run, (start, scan), scopes)
        return True

    def replay_steps(self, run: Run, chunk: tuple[int, ChunkScan], scopes: Scopes | None) -> None:
        """Do again what ``run`` did, for its chunk now at ``chunk[0]`` (``scopes``: the chunk's, if several)."""
        interpreter, forward = self.interpreter, self.forward
        start, scan = chunk
        if start != run.chunk_start and start == run.replayed_at:
            run.moved_to(start)  # edits below it: moved once, not on every keystroke
        run.replayed_at, delta = start, start - run.chunk_start
        for step in run.steps:
            if isinstance(step, Effects):
                bindings = interpreter.apply(step, delta)
                if bindings:
                    forward.defined(bindings, self.current is not None)
            elif type(step) is Waiting:  # moved into place only if it must be evaluated again
                forward.defer(scan.regions[step.number], step.key, interpreter.scope, start, step)
            else:  # the next scope of the chunk
                assert scopes is not None and isinstance(step, tuple)
                self.enter(scopes[-step[0]][0])

    def record(self, scan: ChunkScan, start: int, scopes: Scopes, regions: list[Region]) -> Run | None:
        """Walk the run region by region, recording its steps for the next analysis: the run recorded, if any.

        Not recorded without a cache, nor when its chunk was just edited (other
        chunks were not): it likely will be again, and recording moves every
        result of the run into place; it is recorded once the edits move elsewhere.
        """
        cache = self.cache
        recording = cache is not None and (id(scan) not in cache.chunks.fresh or not cache.chunks.reused)
        if recording:
            assert cache is not None
            key, before = self.key, cache.evaluated + cache.reused
            self.chunk_start, self.steps, self.used, self.recordable, self.elements = start, [], {}, True, 0
            self.mark()
        budget = self.interpreter.evaluator.budget
        first = scopes[0][1]
        for position, (problem, low, high) in enumerate(scopes):
            if position:  # the chunk's next scope: a step of its own (leaving a problem resolves what waited in it)
                if recording:
                    self.close_slice()
                self.enter(problem)
                if recording:
                    self.mark()
                    assert self.steps is not None
                    self.steps.append((-position, ()))
            for number in range(low, high):
                if number > first and self.check_stop is not None and not (number - first) % STOP_POLL_REGIONS:
                    self.check_stop()
                if budget.stopped:
                    self.recordable = False
                    break
                self.region(regions[number], number)
        if not recording:
            return None
        assert cache is not None
        self.close_slice()
        steps, used, self.steps, self.used = self.steps, self.used, None, None
        if not self.recordable:
            return None
        counted = cache.evaluated + cache.reused - before
        run = Run(scan, start, steps, counted, self.elements, used)  # type: ignore[arg-type]
        cache.put_run(key, run)
        return run

    def mark(self) -> None:
        """Start a slice of the results here."""
        results = self.interpreter.results
        self.marks = (len(results.diagnostics), len(results.values), len(results.checks), len(results.bindings),
                      len(results.references), len(results.imports), self.interpreter.evaluator.budget.elements)  # fmt: skip

    def close_slice(self) -> None:
        """End the current slice of the results: it becomes one step of the run being recorded."""
        assert self.steps is not None
        results: Results = self.interpreter.results
        diagnostics, values, checks, bindings, references, imports, elements = self.marks
        if len(results.imports) != imports or any(_incomplete(d) for d in results.diagnostics[diagnostics:]):
            self.recordable = False  # an import (its draft may change), or a bug or a spent budget stopped a region
            return
        spent = self.interpreter.evaluator.budget.elements - elements
        effects = Effects(
            self.chunk_start, tuple(results.diagnostics[diagnostics:]), tuple(results.values.since(values)),
            tuple(results.checks.since(checks)), tuple(results.bindings[bindings:]),
            tuple(results.references.since(references)), (), spent,
        )  # fmt: skip
        if effects.diagnostics or effects.values or effects.checks or effects.bindings or effects.references or spent:
            # A long draft's first keystroke replays every run for the first time: working out what each
            # step's replay reads then was ~10% of it (20 MB), so it is worked out while recording.
            effects.prepare_replay()
            self.steps.append(effects)
        self.elements += spent
        self.mark()

    # -- one region ----------------------------------------------------------------
    def region(self, region: Region, number: int = -1) -> None:
        """Evaluate or replay one region (a long calc block piece by piece)."""
        if not self.active(region):
            return
        if isinstance(region, CalcRegion):
            pieces = split_calc(region)
            if pieces is not None:
                for piece in pieces:
                    self.evaluate(piece, number)
                return
        self.evaluate(region, number)

    def evaluate(self, region: Region, number: int) -> None:
        """Replay ``region`` from the cache, or evaluate it; a claim that meets an unknown name waits."""
        interpreter, cache, forward = self.interpreter, self.cache, self.forward
        scope, text = interpreter.scope, interpreter.text
        start = region_start(region)
        key, looks = None, looks_below(region)  # a claim's unknown name may be defined below
        if cache is None:
            effects, delta, replayed = interpreter.evaluate(region, scope, quiet=True), 0, False
        else:
            cache.walked += 1
            key = region_key(region, text, scope)
            if type(region) is CalcPiece:  # its text alone does not say whether a statement follows it
                key += (region.following is not None, region.contiguous)
            if looks and cache.waiting(key):
                self.defer(region, key, number)
                return
            found = cache.get(key)
            if found is not None:
                effects, delta, replayed = found, start - found.start, True
            else:
                effects, delta, replayed = interpreter.evaluate(region, scope, quiet=True), 0, False
                cache.put(key, effects)
            if self.used is not None and effects.replayable:
                self.used[key] = effects
        if looks and waits(effects):
            if cache is not None and key is not None:
                cache.mark_waiting(key)
            self.defer(region, key, number)
            return
        bindings = interpreter.apply(effects, delta, replayed=replayed)
        if bindings:
            forward.defined(bindings, self.current is not None)

    def defer(self, region: Region, key: tuple[Any, ...] | None, number: int) -> None:
        """``region`` waits for the end of its scope; in a recorded run, that is one of its steps."""
        step = None
        if self.steps is not None:
            self.close_slice()
            if key is None or number < 0:
                self.recordable = False
            else:
                step = Waiting(number, key)
                self.steps.append(step)
        self.forward.defer(region, key, self.interpreter.scope, step=step)
