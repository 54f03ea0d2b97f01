"""How Margin uses the cyclic garbage collector (paused while modules load, then frozen), and frees big results.

Start-up of ``margin lsp`` is dominated by defining classes: ``lsprotocol``
alone defines about a thousand attrs classes.  Those are long-lived objects,
so the cyclic garbage collector's passes during import are wasted work
(measured: ~40 ms of the language server's start), and once loaded they only
lengthen every later full collection.  :func:`collector_paused` pauses the
collector while modules load and then freezes what they created out of its
way.  The code attrs and cattrs generate for those classes comes from
:mod:`server.code_cache`.

This module imports nothing from Margin, so the entry point
(:mod:`server.launch`) and the language server's handlers can both use it.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Objects freed at a time by :func:`release_in_background`: ~1.5 ms of freeing on a 2-core machine.
RELEASE_SLICE = 2_000


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


@contextmanager
def collector_held_for_analysis() -> Iterator[None]:
    """No cyclic collection while an analysis runs; what is alive after it is frozen.

    An analysis allocates ~100 objects per region and keeps most of them (its
    results, and the region cache's records for the next analysis), so the
    collector's young passes during it traverse objects that all survive:
    measured on a keystroke in a 5 MB draft, 0.67 s of CPU with the collector,
    0.49 s held and frozen like this.  Analyses leave no cyclic garbage
    (measured: ``gc.collect()`` after each of a run of edits on every bench
    shape finds nothing), and frozen objects are still freed by reference
    counting when the next analysis replaces them, so nothing is kept longer.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


#: How deep :func:`release_in_background` walks into what lists nothing itself (a region cache: its
#: tables, their runs and stretches, each run's steps); what lies deeper is freed with its holder.
RELEASE_DEPTH = 3
#: A list, tuple, dict or set this long or longer is walked into at any depth (a run's steps, a scan's regions).
RELEASE_WIDE = 16
_CONTAINERS = (list, tuple, dict, set, frozenset)


def release_in_background(box: list[object]) -> None:
    """Free the one object in ``box`` from a thread of its own, a little at a time.

    Freeing a 20 MB draft's analysis at once is one uninterrupted cascade of
    deallocations (~125-160 ms on a 2-core machine, most of it the moved
    definitions and references) that holds the interpreter lock, so the
    event loop could not run meanwhile; its region cache takes longer still
    (both at once, when the draft was closed: 0.63-0.68 s on that machine).  Here
    the thread takes the object apart before dropping it, so that each
    deallocation is small and the lock can pass to the event loop between
    them: an object that lists what it holds (a ``held_objects()`` method:
    ``DocumentAnalysis.held_objects``) has that list dropped :data:`RELEASE_SLICE` items at a time
    (``bench/bench_release.py``, 20 MB: the longest wait of a 1 ms timer
    140-169 -> 28-32 ms); anything else is walked through its references
    (``gc.get_referents``) to :data:`RELEASE_DEPTH`, and through long
    containers at any depth, each part dropped after what it holds was
    taken out of it (a closed 20 MB draft's analysis and region cache:
    ~0.7 M objects, ~1.5 s of the thread, longest wait ~50 ms).  Nothing
    shared is changed: an object something else still holds is only let go
    of, never walked into.  The caller passes its last reference in
    ``box`` and keeps none.
    """
    threading.Thread(target=_release, args=(box,), name="margin-release", daemon=True).start()


def _release(box: list[object]) -> None:
    work: list[tuple[object, int]] = [(box.pop(), 0)]
    while work:
        item, depth = work.pop()
        if sys.getrefcount(item) > 2:  # ``item`` and the argument: someone else holds it, dropping it frees nothing
            continue
        lister = getattr(item, "held_objects", None)
        if lister is not None:
            held: list[object] = lister()
            del lister, item  # the object goes: its containers are freed, what they held stays listed
            while held:
                del held[-RELEASE_SLICE:]
            continue
        if type(item) in _CONTAINERS:
            if depth < RELEASE_DEPTH or len(item) >= RELEASE_WIDE:  # type: ignore[arg-type]
                work += [(part, depth + 1) for part in gc.get_referents(item)]
        elif depth < RELEASE_DEPTH and gc.is_tracked(item):
            work += [(part, depth + 1) for part in gc.get_referents(item)]
        del item  # freed now: what it held was taken out first (or is small)
