"""When the server hands analyses to its worker thread, and when it analyses a version again.

Four small policies of :class:`server.lsp.state.State`'s scheduling, each with
the state it keeps: how many analyses wait for the worker thread at a time
(:class:`WorkerQueue`), whether an analysis the time budget stopped part-way
goes on (:class:`BudgetStops`), what waits until the author stops typing
(:class:`WhenQuiet`), and when a replaced analysis is freed (:class:`LaterRelease`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor

from scaling_core import DocumentAnalysis
from scaling_core.expr.values import OUT_OF_TIME

#: Analyses handed to the worker thread at a time; the others wait on the event loop.  An edit to a draft that
#: 199 open drafts import starts 200 analyses.  Handed over all at once, they came back in bursts: one event-loop
#: turn ran up to 370 of their callbacks, 36-90 ms on the bench's workspace and chain (the loop's budget: 20 ms).  With
#: two, the worker always has the next one and each turn resumes one or two: 2.9-4.5 ms.
QUEUED_FOR_WORKER = 2


class WorkerQueue:
    """Lets :data:`QUEUED_FOR_WORKER` analyses at a time wait for the worker thread, in the order they came."""

    def __init__(self) -> None:
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def slot(self) -> asyncio.Semaphore:
        """What an analysis holds (``async with``) from its hand-over to its result, on the running loop."""
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:  # a semaphore belongs to the loop it first waits on
            self._slots = (loop, asyncio.Semaphore(QUEUED_FOR_WORKER))
        return self._slots[1]


class BudgetStops:
    """Where the time budget last stopped each document's analysis: (version, offset)."""

    def __init__(self) -> None:
        self._stops: dict[str, tuple[int, int]] = {}

    def goes_on(self, uri: str, version: int, analysis: DocumentAnalysis) -> bool:
        """Whether to analyse ``uri`` again at once: the time budget stopped this analysis part-way,
        further on than it stopped the last one of this version (docs/security.md, "Limits").

        The next analysis replays what this one checked from the region cache and
        goes on with a budget of its own, so a draft too long for one budget is
        checked in a few steps; one that stops where it stopped before (a
        statement that alone takes the whole budget) is not analysed again.
        """
        stop = next((d.span.start for d in analysis.diagnostics
                     if d.code == "E003" and d.message.startswith(OUT_OF_TIME)), None)  # fmt: skip
        before = self._stops.pop(uri, None)
        if stop is None or (before is not None and before[0] == version and stop <= before[1]):
            return False
        self._stops[uri] = (version, stop)
        return True

    def forget(self, uri: str) -> None:
        """``uri`` closed: its stop is no longer needed."""
        self._stops.pop(uri, None)


#: How long a document goes unedited before the work put off until then runs (:class:`WhenQuiet`): longer
#: than the pause between keystrokes of someone typing, shorter than moving the mouse to hover.
QUIET_AFTER_S = 0.2


class WhenQuiet:
    """Runs a document's job once it has had no edit for :data:`QUIET_AFTER_S`; each edit puts it off."""

    def __init__(self) -> None:
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def after_quiet(self, uri: str, job: Callable[[], object]) -> None:
        """Run ``job`` on the event loop when ``uri`` has been quiet long enough (replacing a job waiting for it)."""
        self.cancel(uri)
        self._timers[uri] = asyncio.get_running_loop().call_later(QUIET_AFTER_S, self._run, uri, job)

    def cancel(self, uri: str) -> None:
        """``uri`` changed or closed: its waiting job will not run (what it holds is let go now)."""
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def _run(self, uri: str, job: Callable[[], object]) -> None:
        self._timers.pop(uri, None)
        job()


#: How long after a publish the analysis it replaced waits to be freed: past the requests an editor sends as the
#: diagnostics arrive (inlay hints, a hover), within the pause between most keystrokes.
RELEASE_AFTER_S = 0.05
#: Replaced analyses waiting at most; past it the oldest is freed at once, on the event loop (fast typing).
MOST_WAITING = 2


class LaterRelease:
    """Frees replaced analyses in the analysis thread, once no analysis has run for :data:`RELEASE_AFTER_S`.

    Freeing the analysis a publish replaced took 1.5-5 ms on 10,000 lines (5 ms
    when the author had paused: the pause moved every value, check and reference
    into place for the hovers), and it ran on the event loop right after the
    publish, just when the editor asks about the new version: a hover sent then
    waited for it (bench_server, book-like shape: 3-5.7 ms of a ~15 ms hover).
    """

    def __init__(self, executor: Executor, busy: Callable[[], bool]) -> None:
        """``executor``: the analysis thread's; ``busy()``: whether an analysis is waiting or running."""
        self._executor, self._busy = executor, busy
        self._waiting: list[object] = []
        self._timer: asyncio.TimerHandle | None = None

    def release(self, box: list[object]) -> None:
        """Free the one object in ``box`` later (the caller passes its last reference in ``box``, keeps none)."""
        self._waiting.append(box.pop())
        if len(self._waiting) > MOST_WAITING:
            del self._waiting[0]
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(RELEASE_AFTER_S, self._due)

    def _due(self) -> None:
        if self._busy():  # after the analysis: its publish starts the wait again
            self._timer = asyncio.get_running_loop().call_later(RELEASE_AFTER_S, self._due)
            return
        self._timer = None
        waiting, self._waiting = self._waiting, []
        while waiting:  # one job each: freeing is one call that holds the interpreter lock throughout
            box = [waiting.pop()]
            self._executor.submit(box.clear)  # the job holds the last reference: freed in the analysis thread
