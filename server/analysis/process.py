"""The parent side of the analysis process: start it lazily, talk JSON lines, kill it at a deadline.

One :class:`AnalysisProcess` owns at most one child (``python -m
server.analysis.child``, see ``child.py``), started on the first request and
reused after.  Each request has a deadline: a child that has not answered by
then is killed (its whole process group) and the request fails with a
:class:`ProcessFailure` saying why; the next request starts a fresh child.
The same happens when the child exits, closes its output or prints a line
that is not protocol.  Its stderr is drained continuously (the author's
``print`` goes there) and its last lines are quoted when it dies.  The
reading is :mod:`server.json_lines`'s, shared with the measurement workers.

The child runs with ``JAX_PLATFORMS=cpu`` (lowering for cost analysis is a CPU
job; an editor must not take the GPU) and ``XLA_FLAGS`` asking for
:data:`CPU_DEVICES` host devices, so ``shard_map`` programs over a mesh of up
to that many devices can be traced.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from server.json_lines import Child, Ended, Garbage, Silent

#: Host (CPU) devices the analysis process asks XLA for.
CPU_DEVICES = 8
#: Seconds a fresh child has to say it is ready.
START_SECONDS = 30.0


class ProcessFailure(Exception):
    """A request got no answer: the message says why (not started, deadline, exited, garbage)."""

    def __init__(self, message: str, partial: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        #: The replies that did arrive before the failure (a load's finished cells).
        self.partial = partial or []


def child_command() -> list[str]:
    """The command that starts the analysis process with this interpreter."""
    return [sys.executable, "-u", "-m", "server.analysis.child"]


def child_environment() -> dict[str, str]:
    """The analysis process's environment: CPU only, :data:`CPU_DEVICES` host devices."""
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    flag = f"--xla_force_host_platform_device_count={CPU_DEVICES}"
    env["XLA_FLAGS"] = " ".join(f for f in (env.get("XLA_FLAGS", ""), flag) if f)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).parents[2]), env.get("PYTHONPATH", "")) if p)
    return env


class AnalysisProcess:
    """A lazily started, reused analysis process with per-request deadlines."""

    def __init__(self, command: list[str] | None = None, cwd: str | None = None) -> None:
        self.command = command or child_command()
        self.cwd = cwd
        self._child: Child | None = None
        self._lock = threading.Lock()
        self._next_id = 0
        #: What the child said when it started (``python``, ``jax`` versions, ``pid``).
        self.hello: dict[str, Any] = {}
        #: Incremented each time a child starts: programs loaded in an older one are gone.
        self.generation = 0

    # -- life cycle ----------------------------------------------------------------
    def _start(self) -> None:
        child = Child(self.command, env=child_environment(), cwd=self.cwd, tail=20)
        try:
            child.start()
        except OSError as error:
            raise ProcessFailure(f"could not start the analysis process ({self.command[0]}): {error}") from None
        self._child = child
        self.generation += 1
        ready = self._next(time.monotonic() + START_SECONDS, "to start")
        if ready.get("kind") != "ready":
            self._kill()
            raise ProcessFailure(f"the analysis process did not start properly: {str(ready)[:200]}")
        self.hello = ready

    def _kill(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.kill()

    def close(self) -> None:
        """Stop the child (it would also exit when its stdin closes)."""
        with self._lock:
            self._kill()

    @property
    def running(self) -> bool:
        """Whether a child is alive now."""
        return self._child is not None and self._child.alive

    # -- requests ------------------------------------------------------------------
    def request(self, message: dict[str, Any], seconds: float) -> list[dict[str, Any]]:
        """Send ``message``; return every reply to it, the last one final.  Raises :class:`ProcessFailure`."""
        with self._lock:
            if not self.running:
                self._kill()
                self._start()
            self._next_id += 1
            ident = self._next_id
            child = self._child
            assert child is not None
            try:
                child.write(json.dumps({**message, "id": ident}) + "\n")
            except (OSError, ValueError):
                raise self._died("while a request was sent") from None
            deadline = time.monotonic() + seconds
            replies: list[dict[str, Any]] = []
            while True:
                reply = self._next(deadline, f"within {seconds:g} s", replies)
                if reply.get("id") != ident:
                    continue  # a late reply to a request that was given up on
                replies.append(reply)
                if reply.get("final"):
                    return replies

    def _next(self, deadline: float, what: str, partial: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The next protocol line, or kill the child and raise."""
        child = self._child
        assert child is not None
        try:
            return child.lines.next(deadline)
        except Silent:
            self._kill()
            raise ProcessFailure(f"the analysis process did not answer {what}; it was stopped", partial) from None
        except Ended:
            raise self._died("before it answered", partial) from None
        except Garbage as garbage:
            self._kill()
            raise ProcessFailure(
                f"the analysis process printed a line that is not protocol: {garbage.line[:80]!r}", partial
            ) from None

    def _died(self, when: str, partial: list[dict[str, Any]] | None = None) -> ProcessFailure:
        child = self._child
        code = child.exit_code(2) if child is not None else None
        self._kill()
        last = child.last_words() if child is not None else ""
        said = f": {last[:200]}" if last else ""
        return ProcessFailure(f"the analysis process exited (code {code}) {when}{said}", partial)
