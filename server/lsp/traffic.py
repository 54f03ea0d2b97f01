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
is written by one thread only: no lock is needed).  :meth:`EditorTraffic.giving_way`
wraps the preparation's ``go_on``: while a chunk is on its way, the question
sleeps, leaving the lock to the others, instead of going on.  Only what
reaches the event loop is given way to, never an answer: a request may wait
for an analysis queued behind the preparation in the same thread.

This module imports nothing from Margin's engine: the reader uses it before
the engine loads.
"""

from __future__ import annotations

from collections.abc import Callable
from time import sleep

#: How long the background work sleeps at a time while a chunk is on its way (seconds).
GIVE_WAY_STEP_S = 0.0005
#: The longest one question of the background work gives way before going on regardless (seconds).
GIVE_WAY_MOST_S = 0.05


class EditorTraffic:
    """Chunks of the editor's stream read and not yet dispatched."""

    __slots__ = ("_read", "_dispatched")

    def __init__(self) -> None:
        #: Chunks the reader thread read (written by that thread only).
        self._read = 0
        #: Chunks whose messages were all dispatched (written by the event loop only).
        self._dispatched = 0

    def chunk_read(self) -> None:
        """The reader thread read a chunk of the editor's stream (called from that thread)."""
        self._read += 1

    def chunk_dispatched(self) -> None:
        """Every message of the oldest chunk read was dispatched (called on the event loop)."""
        self._dispatched += 1

    def on_its_way(self) -> bool:
        """Whether a chunk was read and its messages are not all dispatched yet."""
        return self._read != self._dispatched

    def giving_way(self, go_on: Callable[[], bool]) -> Callable[[], bool]:
        """``go_on``, asked again after sleeping while a chunk is on its way (:data:`GIVE_WAY_MOST_S` at most)."""

        def ask() -> bool:
            for _ in range(round(GIVE_WAY_MOST_S / GIVE_WAY_STEP_S)):
                if not (self.on_its_way() and go_on()):
                    break
                sleep(GIVE_WAY_STEP_S)
            return go_on()

        return ask
