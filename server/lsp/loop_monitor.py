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
    """Records the lateness of a repeating 5 ms timer on the running loop."""

    def __init__(self) -> None:
        self.lags_ms: list[float] = []
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
            self.lags_ms.append(max(0.0, (loop.time() - before - INTERVAL_S) * 1e3))

    def stats(self) -> dict[str, float | int]:
        """Samples taken, the largest lag and the 99th percentile, in milliseconds."""
        ordered = sorted(self.lags_ms)
        if not ordered:
            return {"samples": 0, "max_lag_ms": 0.0, "p99_lag_ms": 0.0}
        return {
            "samples": len(ordered),
            "max_lag_ms": ordered[-1],
            "p99_lag_ms": ordered[int(0.99 * (len(ordered) - 1))],
        }
