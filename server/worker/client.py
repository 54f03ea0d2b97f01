"""The client side of one worker: start it, wait for ``ready``, send a measurement, watch it.

Every way a worker can fail ends in one :class:`WorkerFailure` whose message
says what happened, in words: the command was not found, ssh could not
connect (exit 255), the worker exited or was killed (with its last line on
stderr), printed a line that is not protocol, stopped sending heartbeats, or
did not finish by its deadline.  A worker that failed is killed (its whole
process group: for ssh, closing the connection ends the remote worker, which
exits when its stdin closes).  A measurement that the worker itself reports
as failed (the author's function raised, a cooperative deadline, a cancel) is
a :class:`MeasureError`: the worker is fine and keeps serving.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from server.json_lines import Child, Ended, Garbage, Lines, Silent
from server.worker.protocol import PROTOCOL, encode, request

#: Seconds a worker may run past its deadline before it is killed (a kernel in flight cannot be interrupted).
GRACE_SECONDS = 10.0
_ids = itertools.count(1)


class WorkerFailure(Exception):
    """The worker (or the transport reaching it) failed; the message says how."""


class MeasureError(Exception):
    """The worker is fine but the measurement failed (``kind``: cancelled, deadline, or an exception's name)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def describe_exit(code: int | None) -> str:
    """An exit status in words (what any transport says before its own meanings)."""
    if code is None:
        return "closed its output"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    if code == 127:
        return "could not be started: command not found (exit 127)"
    if code == 126:
        return "could not be started: the command is not executable (exit 126)"
    return f"exited with code {code}"


class WorkerLink:
    """The client side of one worker, whatever reaches it: the requests, the deadlines, the heartbeats.

    A transport's link says how to start the worker (:meth:`spawn`), send it a
    line (:meth:`send`), stop it (:meth:`kill`, :meth:`close`), whether it is
    up (:attr:`alive`) and how it died (:meth:`_died`); it puts what the
    worker writes into :attr:`lines`.  Everything else (waiting for
    ``ready``, a measurement's deadline and grace, missing heartbeats, a line
    that is not protocol) is this class's, the same for every transport.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.lines = Lines()
        self.ready: dict[str, Any] = {}

    # -- what a transport provides ----------------------------------------------------
    def spawn(self) -> None:
        """Start the worker (without waiting for ``ready``); raises :class:`WorkerFailure`."""
        raise NotImplementedError

    def send(self, message: dict[str, Any]) -> None:
        """Send one request; raises :class:`WorkerFailure` when the worker is gone."""
        raise NotImplementedError

    def kill(self) -> None:
        """Stop the worker now (idempotent)."""
        raise NotImplementedError

    def close(self) -> None:
        """Ask the worker to exit, then make sure it has."""
        try:
            self.send(request("shutdown", "bye"))
        except WorkerFailure:
            pass
        self.kill()

    @property
    def alive(self) -> bool:
        """Whether the worker is up now."""
        raise NotImplementedError

    @property
    def pid(self) -> int | None:
        """The worker's process id, where the transport knows one."""
        return None

    @property
    def stderr_tail(self) -> list[str]:
        """The worker's last lines on stderr (where the transport sees them)."""
        return []

    def _died(self, when: str) -> WorkerFailure:
        """The worker's stream ended: stop it, and say why in words."""
        self.kill()
        return WorkerFailure(f"{self.label}: the worker closed its output {when}")

    # -- shared -----------------------------------------------------------------------
    def wait_ready(self, seconds: float) -> dict[str, Any]:
        """Wait for the worker's ``ready`` line; returns it (its provenance says where it runs)."""
        message = self._next(time.monotonic() + seconds, f"did not say it was ready within {seconds:g} s")
        if message.get("kind") != "ready":
            self.kill()
            raise WorkerFailure(f"{self.label}: the worker spoke before it was ready: {str(message)[:120]}")
        if message.get("error"):
            self.kill()
            raise WorkerFailure(f"{self.label}: the worker cannot measure: {message['error']}")
        if message.get("protocol") != PROTOCOL:
            self.kill()
            raise WorkerFailure(f"{self.label}: the worker speaks protocol {message.get('protocol')}, not {PROTOCOL}")
        self.ready = message
        return message

    def start(self, seconds: float) -> dict[str, Any]:
        """Spawn and wait for ``ready``."""
        self.spawn()
        return self.wait_ready(seconds)

    def cancel(self, target: str) -> None:
        """Ask the worker to cancel a measurement (cooperative: at its next check)."""
        self.send(request("cancel", f"c{next(_ids)}", target=target))

    def measure(
        self,
        spec: dict[str, Any],
        deadline: float,
        heartbeat_timeout: float,
        *,
        grace: float = GRACE_SECONDS,
        ident: str | None = None,
    ) -> dict[str, Any]:
        """Run one measurement; returns the worker's ``result`` message (``result`` and ``provenance``)."""
        ident = ident or f"m{next(_ids)}"
        self.send(request("measure", ident, deadline=deadline, spec=spec))
        hard_end = time.monotonic() + deadline + grace
        late = f"{self.label}: the measurement did not finish within its deadline ({deadline:g} s); it was stopped"
        silent = f"sent no heartbeat for {heartbeat_timeout:g} s; it was stopped"
        while True:
            now = time.monotonic()
            if now >= hard_end:
                self.kill()
                raise WorkerFailure(late)
            wait_until = min(hard_end, now + heartbeat_timeout)
            try:
                message = self._next(wait_until, silent if wait_until < hard_end else "")
            except _Expired:
                raise WorkerFailure(late) from None
            if message.get("id") != ident:
                continue  # a heartbeat, or a late reply to something given up on
            if message.get("kind") != "result":
                continue  # accepted, started
            if message.get("ok"):
                return message
            error = dict(message.get("error") or {})
            raise MeasureError(str(error.get("type", "error")), str(error.get("message", "the measurement failed")))

    def _next(self, until: float, silence: str) -> dict[str, Any]:
        """The next protocol line before ``until``, or kill the worker and raise."""
        try:
            return self.lines.next(until)
        except Silent:
            self.kill()
            if not silence:
                raise _Expired from None
            raise WorkerFailure(f"{self.label}: the worker {silence}") from None
        except Ended:
            raise self._died("before it answered") from None
        except Garbage as garbage:
            self.kill()
            shown = garbage.line[:80]
            raise WorkerFailure(f"{self.label}: the worker printed a line that is not protocol: {shown!r}") from None


class WorkerProcess(WorkerLink):
    """A worker reached through a command (``python -m server.worker``, ``ssh host ...``): its stdin and stdout."""

    def __init__(
        self,
        argv: list[str],
        label: str,
        *,
        env: dict[str, str] | None = None,
        explain_exit: Callable[[int | None], str] = describe_exit,
    ) -> None:
        super().__init__(label)
        self.argv = argv
        self.env = env
        self.explain_exit = explain_exit
        self.child = Child(argv, env=env, tail=30)
        self.lines = self.child.lines

    def spawn(self) -> None:
        """Start the command (without waiting for ``ready``)."""
        try:
            self.child.start()
        except FileNotFoundError:
            raise WorkerFailure(f"{self.label}: command not found: {self.argv[0]}") from None
        except OSError as error:
            raise WorkerFailure(f"{self.label}: could not start {self.argv[0]}: {error}") from None

    @property
    def process(self) -> subprocess.Popen[str] | None:
        """The local process (for ssh: the ssh client)."""
        return self.child.process

    @property
    def alive(self) -> bool:
        """Whether the local process is running."""
        return self.child.alive

    @property
    def pid(self) -> int | None:
        """The local process's id (for ssh: the ssh client's)."""
        return self.child.pid

    def kill(self) -> None:
        """Kill the worker's process group (idempotent)."""
        self.child.kill()

    def close(self) -> None:
        """Ask the worker to exit, then make sure it has."""
        try:
            self.send(request("shutdown", "bye"))
        except WorkerFailure:
            pass
        self.child.exit_code(2)
        self.kill()

    def send(self, message: dict[str, Any]) -> None:
        """Write one request."""
        if self.child.process is None:
            raise WorkerFailure(f"{self.label}: the worker is not running")
        try:
            self.child.write(encode(message))
        except (OSError, ValueError):
            raise self._died("while a request was sent") from None

    def _died(self, when: str) -> WorkerFailure:
        code = self.child.exit_code(3)
        self.kill()
        last = self.child.last_words()
        said = f"; it said: {last.strip()[:200]}" if last else ""
        return WorkerFailure(f"{self.label}: the worker {self.explain_exit(code)} {when}{said}")

    @property
    def stderr_tail(self) -> list[str]:
        """The worker's last lines on stderr."""
        return list(self.child.stderr)


class _Expired(Exception):
    """Internal: the hard deadline passed while waiting (turned into a WorkerFailure by ``measure``)."""
