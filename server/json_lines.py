"""A child process that speaks JSON lines on its stdout: the one reader of the analysis process and the workers.

:class:`Lines` is the stream of messages, read with a deadline: the next
JSON object, or :class:`Silent` (nothing came in time), :class:`Ended` (the
stream closed) or :class:`Garbage` (a line that is not a JSON object).
:class:`Child` starts a command in a session of its own, feeds its stdout
into a :class:`Lines` and keeps the last lines of its stderr, and kills the
whole process group.  What each failure means is the caller's to say: the
analysis process (``server/analysis/process.py``) and a measurement worker
(``server/worker/client.py``) word them differently.  A Ray actor's worker
has no process here, only a :class:`Lines` its polls fill.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import threading
import time
from typing import IO, Any

_END = object()


class Silent(Exception):
    """No line came before the deadline."""


class Ended(Exception):
    """The stream closed (the child exited, or closed its stdout)."""


class Garbage(Exception):
    """A line that is not a JSON object (``line`` is the line, without its newline)."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def decode(line: str) -> dict[str, Any] | None:
    """The object on a JSON line, or None when the line is not one."""
    try:
        message = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


class Lines:
    """Lines arriving from a child, read one JSON object at a time with a deadline."""

    def __init__(self) -> None:
        self._queue: queue.Queue[object] = queue.Queue()

    def put(self, line: str) -> None:
        """One line arrived."""
        self._queue.put(line)

    def end(self) -> None:
        """The stream closed: readers get :class:`Ended` once the lines before it are read."""
        self._queue.put(_END)

    def feed(self, stream: IO[str]) -> None:
        """Put every line of ``stream``, then :meth:`end` (run in a thread of its own)."""
        try:
            for line in stream:
                self.put(line)
        except (OSError, ValueError):
            pass
        self.end()

    def next(self, until: float) -> dict[str, Any]:
        """The next message before the monotonic time ``until``; :class:`Silent`, :class:`Ended`, :class:`Garbage`."""
        try:
            line = self._queue.get(timeout=max(0.0, until - time.monotonic()))
        except queue.Empty:
            raise Silent from None
        if line is _END:
            self._queue.put(_END)  # every later read ends too
            raise Ended
        message = decode(str(line))
        if message is None:
            raise Garbage(str(line).rstrip("\n"))
        return message


class Child:
    """A command started in its own session, its stdout read as JSON lines, its stderr's last lines kept."""

    def __init__(
        self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None, tail: int = 30
    ) -> None:
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        self.lines = Lines()
        self.stderr: collections.deque[str] = collections.deque(maxlen=tail)
        self._write = threading.Lock()

    def start(self) -> None:
        """Start the command; raises ``OSError`` (``FileNotFoundError`` when there is no such command)."""
        process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            encoding="utf-8", errors="replace", env=self.env, cwd=self.cwd, start_new_session=True, bufsize=1,
        )  # fmt: skip
        self.process = process
        assert process.stdout is not None and process.stderr is not None
        threading.Thread(target=self.lines.feed, args=(process.stdout,), daemon=True).start()
        threading.Thread(target=_drain, args=(process.stderr, self.stderr), daemon=True).start()

    @property
    def alive(self) -> bool:
        """Whether the child is running now."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        """The child's process id (None before it starts)."""
        return self.process.pid if self.process is not None else None

    def write(self, text: str) -> None:
        """Write to the child's stdin; raises ``OSError`` or ``ValueError`` when it is gone."""
        process = self.process
        if process is None or process.stdin is None:
            raise OSError("the child is not running")
        with self._write:
            process.stdin.write(text)
            process.stdin.flush()

    def exit_code(self, seconds: float) -> int | None:
        """The child's exit status, waiting up to ``seconds`` for it (None: still running, or never started)."""
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill the child's whole process group and close its pipes (idempotent)."""
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

    def last_words(self) -> str:
        """The child's last non-blank line on stderr ("" when none), after a moment for the drain to catch up."""
        time.sleep(0.05)
        return next((line for line in reversed(self.stderr) if line.strip()), "")


def _drain(stream: IO[str], tail: collections.deque[str]) -> None:
    try:
        for line in stream:
            tail.append(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
