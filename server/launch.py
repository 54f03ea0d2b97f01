"""The process entry point (``margin`` and ``python -m server``), and module loading.

Start-up of ``margin lsp`` is dominated by defining classes: ``lsprotocol``
alone defines about a thousand attrs classes.  Those are long-lived objects,
so the cyclic garbage collector's passes during import are wasted work
(measured: ~40 ms of the language server's start), and once loaded they only
lengthen every later full collection.  :func:`collector_paused` pauses the
collector while modules load and then freezes what they created out of its
way.  The code attrs and cattrs generate for those classes comes from
:mod:`server.code_cache`.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for this block; freeze what it created if it imported modules.

    Used for the start-up imports and around queries that may import a lazy
    dependency (the first hover derivation imports SymPy: ~40k objects whose
    first full collection blocked the event loop for ~46 ms).
    """
    loaded = len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if len(sys.modules) != loaded:
            gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Import the command's modules with the collector paused, then run it.

    An exception while importing (a broken install, a missing data file) is an
    internal error like any other: exit 2 with one line, never a traceback and 1.
    """
    args = sys.argv[1:] if argv is None else argv
    try:
        with collector_paused():
            from server import cli

            if args[:1] == ["lsp"]:
                from server import code_cache

                code_cache.install()
                import server.lsp.app  # noqa: F401 - loaded here so its classes are frozen with the rest
    except Exception as error:  # noqa: BLE001 - a bug or a broken install, reported as such
        from server.crash import report_internal_error

        return report_internal_error(error, debug="--debug" in args)
    # Analyses allocate many small objects and leave no cycles behind (refcounting frees
    # them), so young collections can be rare: 6% of `margin check`, and in the server no
    # collection lands on a keystroke.
    gc.set_threshold(100_000, 50, 50)
    return cli.main(argv)
