"""Freeing a long draft's replaced analysis: at once, or a slice at a time from a thread of its own.

Run: ``python bench/bench_release.py [MEGABYTES]`` (default 20).  Prints, for
each way, how long the freeing took and the longest wait of a 1 ms timer on
the main thread meanwhile (the language server's event loop waits as long
for the interpreter lock).  Asserts nothing.  The language server frees
analyses of drafts of a million characters or more the second way
(``server.collector.release_in_background``).
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import shapes  # noqa: E402
from scaling_core import analyze_document  # noqa: E402
from scaling_core.config import Config  # noqa: E402
from scaling_core.document.incremental import RegionCache  # noqa: E402
from server.collector import collector_held_for_analysis, release_in_background  # noqa: E402
from server.lsp.command import LOCK_SWITCH_INTERVAL_S  # noqa: E402
from server.lsp.documents import Document  # noqa: E402


def longest_wait(free: Callable[[], None]) -> tuple[float, float]:
    """Run ``free`` in a thread; the seconds it took and the longest gap between 1 ms sleeps here meanwhile."""
    done, longest = threading.Event(), 0.0
    started = last = time.perf_counter()
    threading.Thread(target=lambda: (free(), done.set()), daemon=True).start()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    return time.perf_counter() - started, longest


def main() -> None:
    gc.set_threshold(100_000, 50, 50)  # as server/launch.py sets
    sys.setswitchinterval(LOCK_SWITCH_INTERVAL_S)  # as the language server sets (the default, 5 ms, counted too)
    text = shapes.huge(int(float(sys.argv[1] if len(sys.argv) > 1 else 20) * 1e6))
    line, column = shapes.plan(text[:200_000]).typing["top"]
    at = sum(len(row) + 1 for row in text.split("\n")[:line]) + column
    cache, config = RegionCache(), Config()
    with collector_held_for_analysis():
        analyze_document(text, "bench.md", config, cache=cache)  # the first analysis records every region
    print(f"{len(text) / 1e6:.0f} MB draft; each row frees the analysis of one keystroke near its top")
    for number, way in enumerate(("at once", "in slices", "at once", "in slices")):
        text = text[: at + number] + "x" + text[at + number :]
        # The server's line index is the document's (arrays of line starts), which outlives the analysis: a
        # ``LineIndex`` of the analysis's own (440,000 integer objects) was freed with it, as in no server.
        document = Document("file:///bench.md", number + 2, text)
        with collector_held_for_analysis():
            analysis = analyze_document(text, "bench.md", config, cache=cache, index=document.index)
        box: list[object] = [analysis]
        del analysis
        if way == "at once":
            took, wait = longest_wait(box.clear)
        else:
            took, wait = longest_wait(partial(_released, box))
        print(f"  {way:9}: freed in {took * 1e3:4.0f} ms; longest wait of a 1 ms timer meanwhile {wait * 1e3:5.1f} ms")


def _released(box: list[object]) -> None:
    release_in_background(box)
    for thread in [t for t in threading.enumerate() if t.name == "margin-release"]:
        thread.join()


if __name__ == "__main__":
    main()
