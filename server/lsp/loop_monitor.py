"""Event-loop lag, for the benchmark: how late a short timer fires.

The server answers every request from one asyncio loop; a handler that runs
long (a heavy query, an import) delays every other message.  The budget is
no loop turn over 50 ms (printed by ``bench/bench_server.py``; docs/editors.md,
"How it stays fast").  With ``MARGIN_LOOP_MONITOR=1`` the server wakes every
5 ms and records how late it woke (the longest turn that blocked it, less at
most 5 ms); the ``margin/serverStats`` request returns the figures.  Off by
default: an idle language server should not wake 200 times a second.
"""

from __future__ import annotations

import asyncio
import os

INTERVAL_S = 0.005


def enabled() -> bool:
    """Whether ``MARGIN_LOOP_MONITOR`` asks for the monitor."""
    return os.environ.get("MARGIN_LOOP_MONITOR", "0") not in ("", "0")


class LoopMonitor:
    """Records the lateness of a repeating 5 ms timer on the running loop.

    Lags are counted by tenth of a millisecond (a histogram), so the monitor's
    memory stays bounded however long the session: a list of every sample grew
    by ~1 MB every three minutes, which the benchmark's RSS figures counted.
    """

    def __init__(self) -> None:
        #: Samples by lag in tenths of a millisecond; how many there are; the largest lag (exact).
        self.counts: dict[int, int] = {}
        self.samples = 0
        self.max_lag_ms = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start sampling on the running loop (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._sample())

    async def _sample(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(INTERVAL_S)
            self.record(max(0.0, (loop.time() - before - INTERVAL_S) * 1e3))

    def record(self, lag_ms: float) -> None:
        """Count one sample."""
        tenths = int(lag_ms * 10)
        self.counts[tenths] = self.counts.get(tenths, 0) + 1
        self.samples += 1
        self.max_lag_ms = max(self.max_lag_ms, lag_ms)

    def reset(self) -> None:
        """Start the figures over (a benchmark's next phase: typing after opening a long draft)."""
        self.counts, self.samples, self.max_lag_ms = {}, 0, 0.0

    def stats(self) -> dict[str, float | int]:
        """Samples taken, the largest lag and the 99th percentile (to a tenth), in milliseconds."""
        if not self.samples:
            return {"samples": 0, "max_lag_ms": 0.0, "p99_lag_ms": 0.0}
        rank, seen, p99 = int(0.99 * (self.samples - 1)), 0, 0.0
        for tenths in sorted(self.counts):
            seen += self.counts[tenths]
            if seen > rank:
                p99 = tenths / 10
                break
        return {"samples": self.samples, "max_lag_ms": self.max_lag_ms, "p99_lag_ms": p99}
