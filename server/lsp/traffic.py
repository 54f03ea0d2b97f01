"""What the editor has sent that the server has not dispatched yet, and background work that gives way to it.

The server's background work (what a pause prepares for hovers and lenses:
``query_cache.py``) runs in the analysis thread and shares the interpreter
lock with the thread that reads the editor's messages and with the event loop
that dispatches them.  Each of those two waits for the lock whenever it wants
it back (``sys.setswitchinterval``: 1 ms in the language server), several
times per message (a read, a wake-up, the handler), so a keystroke that
arrived while the preparation ran was handled late: its ``didChange`` handler
started 0.6-1 ms after the editor sent it when nothing else ran, up to 8.7 ms
during the preparation (bench_server's book-like shape, a keystroke 0.25 s
after a pause).

:class:`EditorTraffic` counts the chunks of the editor's stream that the
reader thread has read and the event loop has not yet dispatched (each count
is written by one thread only).  :meth:`EditorTraffic.giving_way` wraps the
preparation's ``go_on``: while a chunk is on its way, the question waits,
leaving the lock to the others, until the event loop has dispatched it (it
says so through a condition: the waiting thread does not wake up to look),
instead of going on.  Only what reaches the event loop is given way to,
never an answer: a request may wait for an analysis queued behind the
preparation in the same thread.

This module imports nothing from Margin's engine: the reader uses it before
the engine loads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

#: The longest one question of the background work waits before going on regardless (seconds).
GIVE_WAY_MOST_S = 0.05


class EditorTraffic:
    """Chunks of the editor's stream read and not yet dispatched."""

    __slots__ = ("_read", "_dispatched", "_dispatching", "_dispatcher")

    def __init__(self) -> None:
        #: Chunks the reader thread read (written by that thread only).
        self._read = 0
        #: Chunks whose messages were all dispatched (written by the event loop only).
        self._dispatched = 0
        #: Notified when the event loop has dispatched every chunk read.
        self._dispatching = threading.Condition()
        #: The thread that dispatches (the event loop's): a question asked there never waits for itself.
        self._dispatcher: int | None = None

    def chunk_read(self) -> None:
        """The reader thread read a chunk of the editor's stream (called from that thread)."""
        self._read += 1

    def chunk_dispatched(self) -> None:
        """Every message of the oldest chunk read was dispatched (called on the event loop)."""
        self._dispatched += 1
        self._dispatcher = threading.get_ident()
        if not self.on_its_way():
            with self._dispatching:
                self._dispatching.notify_all()

    def on_its_way(self) -> bool:
        """Whether a chunk was read and its messages are not all dispatched yet."""
        return self._read != self._dispatched

    def giving_way(self, go_on: Callable[[], bool]) -> Callable[[], bool]:
        """``go_on``, asked once no chunk is on its way (after waiting :data:`GIVE_WAY_MOST_S` at most); asked on
        the event loop (the preparation's first question is), at once: the loop would wait for itself."""

        def ask() -> bool:
            if self.on_its_way() and threading.get_ident() != self._dispatcher and go_on():
                with self._dispatching:
                    self._dispatching.wait_for(self._dispatched_all, GIVE_WAY_MOST_S)
            return go_on()

        return ask

    def _dispatched_all(self) -> bool:
        return not self.on_its_way()
