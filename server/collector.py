"""How Margin uses the cyclic garbage collector (paused while modules load, then frozen), frees big results,
keeps the C library's freed large blocks for a process that works on big drafts, and hands its free
memory back to the system once such a draft is opened and each time a replaced analysis of it is freed.

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
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: glibc's ``mallopt`` parameters (``malloc.h``).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
#: After :func:`keep_large_blocks`: blocks up to this size come from the heap, and this much freed at its top
#: is kept before any is given back to the system.
KEPT_BLOCKS_BYTES = 256 << 20
_blocks_kept = False

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


def release_in_background(box: list[object], hand_back: bool = False) -> None:
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
    140-169 -> 28-32 ms; as that bench now measures, with the server's 1 ms
    switch interval and line index: 32-33 -> 2.9-4.5 ms); anything else is walked through its references
    (``gc.get_referents``) to :data:`RELEASE_DEPTH`, and through long
    containers at any depth, each part dropped after what it holds was
    taken out of it (a closed 20 MB draft's analysis and region cache:
    ~0.7 M objects, ~1.5 s of the thread, longest wait ~50 ms).  Nothing
    shared is changed: an object something else still holds is only let go
    of, never walked into.  The caller passes its last reference in
    ``box`` and keeps none.  With ``hand_back``, the thread then gives the
    system back what the C library holds free (:func:`hand_back_free_memory`).
    """
    threading.Thread(target=_release, args=(box, hand_back), name="margin-release", daemon=True).start()


def _release(box: list[object], hand_back: bool) -> None:
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
    if hand_back:
        hand_back_free_memory()


def keep_large_blocks() -> None:
    """On glibc, take large blocks from the heap and keep freed ones for reuse (once per process).

    glibc maps each block over its threshold (32 MB at most) on its own and
    unmaps it when freed, so each version of a 20 MB draft (a 40 MB string once
    joined) came in fresh pages: joining it took 27-37 ms, ~80% of it the
    kernel handing out ~10,000 pages, with the interpreter lock held (the event
    loop waited).  Kept, a join in one thread takes ~5 ms from the third
    version on; in the language server (the analysis thread joins, another
    frees) half the joins of twelve keystrokes took 5-10 ms, the others still
    came in a new heap's fresh pages (31-54 ms before, in one pair of runs).
    The process keeps the freed blocks (up to ~70 MB more on that draft) until
    :func:`hand_back_free_memory`, which the server calls once a replaced
    analysis is freed (a join's page faults no longer hold the lock: ``long_join``).
    The language server calls this for a draft of a million characters or
    more; elsewhere than glibc it does nothing.
    """
    global _blocks_kept
    if _blocks_kept:
        return
    _blocks_kept = True
    _set_malloc_options((_M_MMAP_THRESHOLD, KEPT_BLOCKS_BYTES), (_M_TRIM_THRESHOLD, KEPT_BLOCKS_BYTES))


def hand_back_free_memory() -> None:
    """On glibc, give the system back the pages the C library holds free (``malloc_trim``); elsewhere nothing.

    Freed memory stays the process's: at the top of a heap up to the trim
    threshold (:func:`keep_large_blocks` raises it), and inside heaps and the
    arenas of other threads (the analysis thread's, the one that decoded a
    long ``didOpen``) always.  The language server calls this after the first
    analysis of a draft of ``HAND_BACK_FROM`` characters or more (5 million),
    and after freeing a replaced one in the background (never on the way
    from a keystroke to its diagnostics): a 20 MB draft's server held 543 MB
    once opened and 628 MB after 100 keystrokes, 517 and 600 MB so (a call
    takes 1-4 ms, the interpreter lock released).  The pages handed back are
    faulted in again by the next analysis: on a 1.2 MB draft (116 MB held
    either way, within the budget) typing to diagnostics took ~1 ms longer.
    """
    global _trim
    if _trim is None:
        _trim = _no_trim
        if _glibc():
            import ctypes

            _trim = getattr(ctypes.CDLL(None), "malloc_trim", _no_trim)
    _trim(0)


def _no_trim(_pad: int) -> int:
    return 0


def share_heaps(heaps: int = 2) -> None:
    """On glibc, let threads started from now on allocate from the heaps already made, ``heaps`` at most.

    glibc gives each new thread a heap (an "arena") of its own, up to eight
    per core, and a block freed in one heap serves only that heap's later
    allocations.  The language server's threads (reading messages, analysing,
    freeing replaced analyses in the background) each filled a heap of their
    own, so what one freed the next could not reuse: a 20 MB draft's server
    held 364 MB once opened, 438 MB after 100 keystrokes and 386 MB once the
    replaced analysis was freed; with two heaps, 323, 396 and 346 MB
    (``bench/bench_server.py --only huge``).  The interpreter lock already
    serialises the threads' allocations, so sharing a heap adds no waiting
    worth measuring.  The server calls this once the editor has its answer to
    ``initialize``, before it opens a draft (``ctypes`` takes ~2 ms to import:
    kept off the start-up path); elsewhere than glibc it does nothing.
    """
    _set_malloc_options((_M_ARENA_MAX, heaps))


def _set_malloc_options(*options: tuple[int, int]) -> None:
    """On glibc, set each ``(parameter, value)`` of ``options`` with ``mallopt``; elsewhere nothing."""
    if not _glibc():
        return
    import ctypes  # only here: ~2-3 ms to import, kept off the start-up path

    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is not None:
        for parameter, value in options:
            mallopt(parameter, value)


#: glibc's ``malloc_trim`` once looked up (``_no_trim`` elsewhere).
_trim: Callable[[int], int] | None = None


def _glibc() -> bool:
    """Whether the C library is glibc."""
    try:
        library = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # not a POSIX system, or no such name: not glibc
        return False
    return library.startswith("glibc")
