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

import collections
import itertools
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from server.worker.protocol import PROTOCOL, decode, encode, request

_EOF = object()
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


class WorkerProcess:
    """One running worker, reached through a command (``python -m server.worker``, ``ssh host ...``)."""

    def __init__(
        self,
        argv: list[str],
        label: str,
        *,
        env: dict[str, str] | None = None,
        explain_exit: Callable[[int | None], str] = describe_exit,
    ) -> None:
        self.argv = argv
        self.label = label
        self.env = env
        self.explain_exit = explain_exit
        self.process: subprocess.Popen[str] | None = None
        self.ready: dict[str, Any] = {}
        self._lines: queue.Queue[object] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=30)
        self._write = threading.Lock()

    # -- life cycle -------------------------------------------------------------------
    def spawn(self) -> None:
        """Start the command (without waiting for ``ready``)."""
        try:
            process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                encoding="utf-8", errors="replace", env=self.env, start_new_session=True, bufsize=1,
            )  # fmt: skip
        except FileNotFoundError:
            raise WorkerFailure(f"{self.label}: command not found: {self.argv[0]}") from None
        except OSError as error:
            raise WorkerFailure(f"{self.label}: could not start {self.argv[0]}: {error}") from None
        self.process = process
        assert process.stdout is not None and process.stderr is not None
        threading.Thread(target=_read, args=(process.stdout, self._lines), daemon=True).start()
        threading.Thread(target=_drain, args=(process.stderr, self._stderr), daemon=True).start()

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

    @property
    def pid(self) -> int | None:
        """The local process's id (for ssh: the ssh client's)."""
        return self.process.pid if self.process is not None else None

    def kill(self) -> None:
        """Kill the worker's process group (idempotent)."""
        process = self.process
        if process is None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (process.stdin, process.stdout, process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def close(self) -> None:
        """Ask the worker to exit, then make sure it has."""
        try:
            self.send(request("shutdown", "bye"))
        except WorkerFailure:
            pass
        process = self.process
        if process is not None:
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    # -- requests ---------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Write one request."""
        process = self.process
        if process is None or process.stdin is None:
            raise WorkerFailure(f"{self.label}: the worker is not running")
        try:
            with self._write:
                process.stdin.write(encode(message))
                process.stdin.flush()
        except (OSError, ValueError):
            raise self._died("while a request was sent") from None

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
            line = self._lines.get(timeout=max(0.0, until - time.monotonic()))
        except queue.Empty:
            self.kill()
            if not silence:
                raise _Expired from None
            raise WorkerFailure(f"{self.label}: the worker {silence}") from None
        if line is _EOF:
            raise self._died("before it answered")
        message = decode(str(line))
        if message is None:
            self.kill()
            shown = str(line).rstrip("\n")[:80]
            raise WorkerFailure(f"{self.label}: the worker printed a line that is not protocol: {shown!r}")
        return message

    def _died(self, when: str) -> WorkerFailure:
        process = self.process
        code = None
        if process is not None:
            try:
                code = process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                code = None
        self.kill()
        time.sleep(0.05)  # let the stderr drain catch the last words
        last = next((line for line in reversed(self._stderr) if line.strip()), "")
        said = f"; it said: {last.strip()[:200]}" if last else ""
        return WorkerFailure(f"{self.label}: the worker {self.explain_exit(code)} {when}{said}")

    @property
    def stderr_tail(self) -> list[str]:
        """The worker's last lines on stderr."""
        return list(self._stderr)


class _Expired(Exception):
    """Internal: the hard deadline passed while waiting (turned into a WorkerFailure by ``measure``)."""


def _read(stream: IO[str], lines: queue.Queue[object]) -> None:
    try:
        for line in stream:
            lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(_EOF)


def _drain(stream: IO[str], tail: collections.deque[str]) -> None:
    try:
        for line in stream:
            tail.append(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
