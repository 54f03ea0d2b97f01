"""Engine benchmark: unit arithmetic ns/op and `margin check` lines/s.

Run: ``python bench/bench_engine.py [--scaling]``.  Prints figures; asserts nothing.
It says first whether the engine it times is compiled (a ``MARGIN_COMPILE=1``
install) or pure Python, the default.
Compares the full analysis of a generated 10,000-line draft (run as
``margin check`` runs it, the cyclic collector held) with a bare
markdown-it-py parse (CommonMark, inline rules on) of the same text, times the
whole ``margin check`` process on a 4,500-line chapter (the size of a real
scaling-book chapter), and with ``--scaling`` the analysis of 5, 10 and 50 MB
drafts (every stage should stay linear: the ms per MB should not grow).
"""

from __future__ import annotations

import gc
import resource
import subprocess
import sys
import tempfile
import time
import timeit
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from markdown_it import MarkdownIt  # noqa: E402

from bench import keep_bytecode  # noqa: E402
from bench.corpus import book_like, dense  # noqa: E402
from scaling_core import analyze_document  # noqa: E402
from scaling_core.config import Config  # noqa: E402
from scaling_core.document.incremental import RegionCache  # noqa: E402
from scaling_core.expr import evaluator  # noqa: E402  (compiled in a compiled engine)
from scaling_core.units import dimension  # noqa: E402
from scaling_core.units.quantity import Quantity  # noqa: E402
from server.collector import collector_held_for_analysis  # noqa: E402


def best_of(function, repeat: int = 5) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def best_cpu_of(function, repeat: int = 5) -> float:
    """Best CPU time of ``repeat`` calls, in seconds: steadier than wall time on a shared machine."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return min(times)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_process_of(command: list[str], cwd: Path, repeat: int = 5) -> tuple[float, float]:
    """Best wall time and best CPU time (user + system) of running ``command`` ``repeat`` times, in seconds."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu, start = _children_cpu(), time.perf_counter()
        subprocess.run(command, capture_output=True, cwd=cwd, check=False)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return min(walls), min(cpus)


def unit_arithmetic() -> None:
    seconds = Quantity(2.0, dimension.pack({"time": 1}))
    bytes_ = Quantity(3.0, dimension.pack({"information": 1}))
    other = Quantity(5.0, dimension.pack({"time": 1}))
    number = 200_000
    for label, statement in (
        ("mul", lambda: seconds * bytes_),
        ("div", lambda: bytes_ / seconds),
        ("add", lambda: seconds + other),
    ):
        per_op = min(timeit.repeat(statement, number=number, repeat=5)) / number
        overhead = min(timeit.repeat(lambda: None, number=number, repeat=5)) / number
        print(
            f"unit arithmetic {label}: {(per_op - overhead) * 1e9:6.0f} ns/op (call overhead {overhead * 1e9:.0f} ns removed)"
        )


def _analyze_as_checked(text: str) -> object:
    """One analysis as `margin check` runs it: the collector held (``server.collector``); with it running
    instead, the book-like draft's analysis took ~25% longer."""
    with collector_held_for_analysis():
        return analyze_document(text, "bench.md")


def throughput(name: str, text: str) -> None:
    lines = text.count("\n")
    parser = MarkdownIt("commonmark")
    markdown = best_of(lambda: parser.parse(text))
    analysis_time = best_of(lambda: _analyze_as_checked(text), repeat=7)
    analysis_cpu = best_cpu_of(lambda: _analyze_as_checked(text), repeat=7)
    analysis = analyze_document(text, "bench.md")
    not_passing = sum(c.status != "pass" for c in analysis.checks)
    errors = sum(d.severity <= 2 for d in analysis.diagnostics)
    print(
        f"\n{name} corpus: {lines:,} lines, {len(analysis.values):,} values, {len(analysis.checks):,} checks "
        f"({not_passing} not passing, {errors} errors/warnings), {len(analysis.problems)} problems"
    )
    print(f"  markdown-it-py parse:   {markdown * 1e3:7.1f} ms  {lines / markdown:9,.0f} lines/s")
    print(
        f"  margin analysis:        {analysis_time * 1e3:7.1f} ms  {lines / analysis_time:9,.0f} lines/s  "
        f"({analysis_time / markdown:.2f}x markdown-it)"
    )
    print(f"  margin analysis (CPU):  {analysis_cpu * 1e3:7.1f} ms  {lines / analysis_cpu:9,.0f} lines/s")
    with tempfile.TemporaryDirectory() as folder:
        draft = Path(folder) / "bench.md"
        draft.write_text(text, "utf-8")
        command = [sys.executable, "-m", "server", "check", str(draft)]
        root = Path(__file__).resolve().parent.parent
        wall = best_of(lambda: subprocess.run(command, capture_output=True, cwd=root, check=False), repeat=3)
        print(
            f"  margin check (process): {wall * 1e3:7.1f} ms  {lines / wall:9,.0f} lines/s  (with start-up and imports)"
        )


def process_time(lines: int) -> None:
    """The whole `margin check` process (start-up, imports, analysis, report) on a chapter of ``lines`` lines."""
    text = book_like(lines)
    with tempfile.TemporaryDirectory() as folder:
        draft = Path(folder) / "chapter.md"
        draft.write_text(text, "utf-8")
        command = [sys.executable, "-m", "server", "check", str(draft)]
        root = Path(__file__).resolve().parent.parent
        start_up = best_of(  # `margin --version` loads what `margin check` loads, then prints one line
            lambda: subprocess.run([*command[:-2], "--version"], capture_output=True, cwd=root, check=True), repeat=5
        )
        wall, cpu = best_process_of(command, root)
    print(
        f"\nmargin check (process), {text.count(chr(10)):,}-line chapter: {wall * 1e3:6.1f} ms, CPU {cpu * 1e3:6.1f} ms "
        f"(target 250 ms; `margin --version`: {start_up * 1e3:.1f} ms)"
    )


def scaling() -> None:
    """analyze_document on 5, 10 and 50 MB book-like drafts: ms per MB stays flat when every stage is linear.

    Without a cache (``margin check``) and with one (the language server's first
    analysis, which also records every run for the next), the collector held
    as both hold it (``server.collector.collector_held_for_analysis``); no time
    limit, so the whole draft is analysed however long it takes.
    """
    print()
    for megabytes in (5, 10, 50):
        text = book_like(int(megabytes * 1e6 / 45.5))  # ~45.5 characters a line
        size, lines = len(text) / 1e6, text.count("\n")
        plain = _time_analysis(text, None)
        cached = _time_analysis(text, RegionCache())
        print(
            f"analysis of {size:5.1f} MB ({lines:,} lines): {plain:7.2f} s  {plain * 1e3 / size:6.0f} ms/MB;"
            f"  with a cache (first analysis in the editor): {cached:7.2f} s  {cached * 1e3 / size:6.0f} ms/MB"
        )


def _time_analysis(text: str, cache: RegionCache | None) -> float:
    """One analysis, the collector held as `margin check` and the language server hold it (server/collector.py)."""
    config = replace(Config(), analysis_time_limit=1e6)
    with collector_held_for_analysis():  # 40 MB, no cache: 525 ms/MB with the collector running, 369 held
        return best_of(lambda: analyze_document(text, "bench.md", config, cache=cache), repeat=1)


if __name__ == "__main__":
    gc.set_threshold(100_000, 50, 50)  # as server/launch.py sets for every margin command
    print(keep_bytecode())
    print(
        'engine: compiled with mypyc (docs/cli.md, "A compiled engine")'
        if not (evaluator.__file__ or "").endswith(".py")
        else 'engine: pure Python (a MARGIN_COMPILE=1 install compiles it: docs/cli.md, "A compiled engine")'
    )
    unit_arithmetic()
    throughput("book-like", book_like(10_000))
    throughput("dense", dense(10_000))
    process_time(4_500)
    if "--scaling" in sys.argv:
        scaling()
    print(f"\npeak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
