"""Where a long draft's analysis and region cache keep their memory: the process's RSS, and the bytes reachable
from them by type and by holder.

Run: ``python bench/bench_memory.py [MEGABYTES] [--edit] [--holders]`` (default 20).  Analyses a book-like
draft of that size with a region cache (as the language server keeps one per draft), optionally once more
after a one-digit edit near the top (what typing adds: the moved copies), then walks everything the analysis
and the cache reach (``gc.get_referents``, each object counted once, modules, classes and functions left out)
and prints the total, the 25 types holding the most and, with ``--holders``, the 40 largest (type, holder)
pairs, a holder being the nearest enclosing object that is not a tuple, list or dict.  ``sys.getsizeof`` counts
an object's own bytes, not the allocator's rounding.  Asserts nothing.
"""

from __future__ import annotations

import gc
import sys
import time
import types
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.shapes import huge  # noqa: E402
from scaling_core import analyze_document  # noqa: E402
from scaling_core.document.incremental import RegionCache  # noqa: E402
from server.collector import collector_held_for_analysis  # noqa: E402

#: What the walk does not count: the code and the program's own structure, shared by every analysis.
_NOT_COUNTED = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.CodeType)
_CONTAINERS = ("tuple", "list", "dict")


def resident_mb() -> float:
    """This process's resident memory now, in MB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return float("nan")


def census(roots: list[object], left_out: list[object]) -> tuple[Counter[str], Counter[str], Counter[tuple[str, str]]]:
    """Bytes and counts by type, and bytes by (type, holder), of everything ``roots`` reach (``left_out`` and
    what only it reaches excepted)."""
    seen = {id(item) for item in left_out}
    size: Counter[str] = Counter()
    count: Counter[str] = Counter()
    held: Counter[tuple[str, str]] = Counter()
    stack: list[tuple[object, str]] = [(root, "root") for root in roots]
    while stack:
        item, holder = stack.pop()
        if id(item) in seen or isinstance(item, _NOT_COUNTED):
            continue
        seen.add(id(item))
        name = type(item).__name__
        bytes_ = sys.getsizeof(item)
        size[name] += bytes_
        count[name] += 1
        held[(name, holder)] += bytes_
        inner = f"{holder}>{name}"[-48:] if name in _CONTAINERS else name
        stack += [(part, inner) for part in gc.get_referents(item)]
    return size, count, held


def main() -> None:
    megabytes = next((float(arg) for arg in sys.argv[1:] if not arg.startswith("-")), 20.0)
    text = huge(int(megabytes * 1e6))
    gc.collect()
    before = resident_mb()
    cache = RegionCache()
    start = time.perf_counter()
    with collector_held_for_analysis():
        analysis = analyze_document(text, "draft.md", cache=cache)
    lines = text.count("\n") + 1
    print(f"{len(text) / 1e6:.1f} MB draft, {lines:,} lines: analysed in {time.perf_counter() - start:.1f} s, "
          f"RSS {before:.0f} -> {resident_mb():.0f} MB")  # fmt: skip
    if "--edit" in sys.argv:
        at = text.index("B_7 = 512")
        text = text[:at] + "B_7 = 513" + text[at + 9 :]
        start = time.perf_counter()
        with collector_held_for_analysis():
            analysis = analyze_document(text, "draft.md", cache=cache)
        print(f"one digit edited near the top: {time.perf_counter() - start:.2f} s, RSS {resident_mb():.0f} MB")
    size, count, held = census([analysis, cache], [text, sys.modules, globals()])
    print(f"reachable from the analysis and its region cache (the draft's text left out): "
          f"{sum(size.values()) / 1e6:.1f} MB")  # fmt: skip
    for name, bytes_ in size.most_common(25):
        print(f"  {name:28s} {bytes_ / 1e6:7.2f} MB {count[name]:10,d}")
    if "--holders" in sys.argv:
        print("by holder:")
        for (name, holder), bytes_ in held.most_common(40):
            print(f"  {name:16s} in {holder:50s} {bytes_ / 1e6:7.2f} MB")


if __name__ == "__main__":
    main()
