"""Language-server benchmark: the real server over stdio, as a client sees it.

Run: ``python bench/bench_server.py`` (``--quick`` for fewer edits, ``--only
giant,dense`` for some shapes, ``--no-startup`` to skip the start-up figures,
``--startup-only`` for them alone).
Prints start-up figures, then one table of every draft shape (``shapes.py``):
edit -> diagnostics p50/p95 at the top, middle and bottom (keystrokes back to
back, and keystrokes 0.2-0.3 s after a pause, while the server prepares hovers),
hover/inlay/completion p95, the longest event-loop turn and the RSS before and
after typing.  Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pytest_lsp import client_capabilities  # noqa: E402

from bench import keep_bytecode, shape_sessions, shapes  # noqa: E402
from bench.corpus import book_like  # noqa: E402
from scaling_core import analyze_document  # noqa: E402
from scaling_core.document.incremental import RegionCache  # noqa: E402

URI = (Path("/tmp") / "margin-bench" / "draft.md").as_uri()
#: How the server is started; a bare pygls server (the floor of start-up) for comparison.
SERVER = ("-m", "server", "lsp")
FLOOR = (str(Path(__file__).resolve().parent / "pygls_floor.py"),)
STARTS = 7
TYPED = 40
FORMULA = "\n```calc\nI_bench = matmul_intensity(512, 8192, 32768)\n```\n"
SWEEP = "\n```calc\nbatch = [64, 128, 256]\nbatch * 2 = [128, 256, 512]\n```\n"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Client:
    def __init__(self, command: tuple[str, ...] = SERVER) -> None:
        self.command = command
        self.lsp = LanguageClient("margin-bench", "1")
        self.published: dict[int, asyncio.Event] = {}

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.version or 0, asyncio.Event()).set()

        @self.lsp.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[object]:
            return [None for _ in params.items]

    async def start(self) -> None:
        await self.lsp.start_io(sys.executable, *self.command)
        await self.lsp.initialize_async(
            types.InitializeParams(capabilities=client_capabilities("visual_studio_code"), root_uri=None)
        )
        self.lsp.initialized(types.InitializedParams())

    async def wait(self, version: int) -> None:
        await asyncio.wait_for(self.published.setdefault(version, asyncio.Event()).wait(), 120)

    def open(self, text: str) -> None:
        self.lsp.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(URI, "markdown", 1, text))
        )

    def peak_rss_mb(self) -> float:
        pid = self.lsp._server.pid  # type: ignore[attr-defined]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def stop(self) -> None:
        await self.lsp.shutdown_async(None)
        self.lsp.exit(None)
        await self.lsp.stop()


async def start_to_initialize(command: tuple[str, ...] = SERVER) -> float:
    """Spawn the server: seconds until its ``initialize`` response arrives."""
    start = time.perf_counter()
    client = Client(command)
    await client.start()
    elapsed = time.perf_counter() - start
    await client.stop()
    return elapsed


async def start_to_first_diagnostics(lines: int, extra: str = "") -> float:
    """Spawn the server, initialize, open a draft: seconds until its diagnostics arrive."""
    text = book_like(lines) + extra
    start = time.perf_counter()
    client = Client()
    await client.start()
    client.open(text)
    await client.wait(1)
    elapsed = time.perf_counter() - start
    await client.stop()
    return elapsed


async def interactive(lines: int, edits: int, requests: int, monitor: bool = False) -> dict[str, object]:
    """One editing session; with ``monitor`` the server samples its event-loop lag (which costs it a little)."""
    text = book_like(lines) + FORMULA
    os.environ["MARGIN_LOOP_MONITOR"] = "1" if monitor else "0"
    client = Client()
    await client.start()
    started = time.perf_counter()
    client.open(text)
    await client.wait(1)
    first = time.perf_counter() - started
    rows = text.split("\n")
    batch_lines = [i for i, row in enumerate(rows) if re.match(r"B_\d+ = \d+$", row)]
    rng = random.Random(7)
    latencies = []
    for version in range(2, edits + 2):
        line = rng.choice(batch_lines)
        column = len(rows[line]) - 1
        digit = str(rng.randint(0, 9))
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, column), types.Position(line, column + 1)), text=digit
        )
        rows[line] = rows[line][:-1] + digit
        start = time.perf_counter()
        client.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=URI, version=version), [change])
        )
        await client.wait(version)
        latencies.append(time.perf_counter() - start)
    # Typing: each keystroke inserts a character near the top, so everything after it moves.
    prose = next(i for i, row in enumerate(rows) if row.startswith("The roofline model asks"))
    typing = []
    for offset, version in enumerate(range(edits + 2, edits + 2 + TYPED)):
        where = types.Position(prose, 4 + offset)
        change = types.TextDocumentContentChangePartial(range=types.Range(where, where), text="x")
        start = time.perf_counter()
        client.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=URI, version=version), [change])
        )
        await client.wait(version)
        typing.append(time.perf_counter() - start)
    doc = types.TextDocumentIdentifier(URI)
    formula_line = next(i for i, row in enumerate(rows) if row.startswith("I_bench"))
    start = time.perf_counter()
    first_hover = await client.lsp.text_document_hover_async(types.HoverParams(doc, types.Position(formula_line, 1)))
    first_hover_s = time.perf_counter() - start
    assert first_hover is not None and "matmul_intensity" in str(first_hover.contents)
    value_lines = [i for i, row in enumerate(rows) if row.startswith("t_")]
    timings: dict[str, list[float]] = {"hover": [], "inlay": [], "completion": []}
    for _ in range(requests):
        line = rng.choice(value_lines)
        start = time.perf_counter()
        await client.lsp.text_document_hover_async(types.HoverParams(doc, types.Position(line, 1)))
        timings["hover"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await client.lsp.text_document_inlay_hint_async(
            types.InlayHintParams(doc, types.Range(types.Position(line, 0), types.Position(line + 60, 0)))
        )
        timings["inlay"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await client.lsp.text_document_completion_async(types.CompletionParams(doc, types.Position(line, 4)))
        timings["completion"].append(time.perf_counter() - start)
    rss = client.peak_rss_mb()
    stats = await client.lsp.protocol.send_request_async("margin/serverStats", {})
    await client.stop()
    return {
        "first": first,
        "latencies": latencies,
        "typing": typing,
        "timings": timings,
        "rss": rss,
        "first_hover": first_hover_s,
        "loop": stats.loop,
    }


def reevaluated_per_edit(lines: int) -> tuple[int, int, int, int, int, int]:
    text = book_like(lines)
    cache = RegionCache()
    first = analyze_document(text, "draft.md", cache=cache)
    total, statements = cache.evaluated + cache.reused, len(first.values) + len(first.checks)
    edited = text.replace("B_7 = 512", "B_7 = 513", 1)
    analyze_document(edited, "draft.md", cache=cache)
    chunks = cache.chunks.parsed + cache.chunks.reused
    return cache.statements, statements, cache.evaluated, total, cache.chunks.parsed, chunks


async def edit_during_first_analysis(lines: int, after_s: float) -> tuple[float, int]:
    """Edit ``after_s`` into the first analysis: seconds from the edit to its diagnostics, analyses stopped."""
    text = book_like(lines)
    client = Client()
    await client.start()
    client.open(text)
    await asyncio.sleep(after_s)  # the scenario: the author types while the draft is still being checked
    line = text.split("\n").index("B_0 = 64")
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, 4), types.Position(line, 6)), text="32"
    )
    start = time.perf_counter()
    client.lsp.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=URI, version=2), [change])
    )
    await client.wait(2)
    elapsed = time.perf_counter() - start
    stats = await client.lsp.protocol.send_request_async("margin/serverStats", {})
    await client.stop()
    return elapsed, stats.analyses_cancelled


#: (edits per series, requests, keystrokes before the second RSS reading, 20 MB burst, workspace edits)
FULL = (40, 60, 2000, 1000, 20)
QUICK = (8, 10, 100, 100, 5)
#: A shape's session is abandoned after this long (its row says so).
SHAPE_TIMEOUT_S = 1800
ALL_SHAPES = ("book", "forward", "giant", "dense", "dense_flat", "failing", "unknown", "huge", "workspace", "chain")


async def shape_table(only: tuple[str, ...], figures: tuple[int, ...]) -> None:
    """Every shape's editing session; one table (``figures``: as :data:`FULL`)."""
    edits, requests, rss_edits, burst, workspace_edits = figures
    print(shape_sessions.format_table([], header=True), flush=True)
    for name in only:
        started = time.perf_counter()
        try:
            if name in shapes.SHAPES:
                text = shapes.SHAPES[name]()
                session = shape_sessions.shape_session(name, text, edits, requests, rss_edits)
            elif name == "huge":
                session = shape_sessions.huge_session(20_000_000, burst)
            else:
                session = shape_sessions.workspace_session(200, workspace_edits, name)
            row = await asyncio.wait_for(session, SHAPE_TIMEOUT_S)
        except (TimeoutError, asyncio.TimeoutError, OSError) as failure:  # a shape that hangs or crashes the server
            row = shape_sessions.Row(name, notes=[f"no figures: {type(failure).__name__} {failure}".strip()])
        print(shape_sessions.format_table([row]), flush=True)  # row by row: a long run shows what it has
        print(f"  ({name}: {time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer edits per series (for iterating)")
    parser.add_argument("--only", default=",".join(ALL_SHAPES), help="shapes, comma-separated")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up and book-session figures")
    parser.add_argument("--startup-only", action="store_true", help="the start-up figures alone")
    parser.add_argument("--rss-edits", type=int, help="keystrokes before the second RSS reading (2,000)")
    parser.add_argument("--burst", type=int, help="keystrokes of the 20 MB document's burst (1,000)")
    options = parser.parse_args()
    # A fresh generated-code cache (server/code_cache.py): the first start fills it, as after an install.
    os.environ["MARGIN_CACHE_DIR"] = tempfile.mkdtemp(prefix="margin-bench-cache-")
    print(keep_bytecode())
    if options.startup_only:
        await startup_times()
        return
    if not options.no_startup:
        await startup_figures()
    figures = list(QUICK if options.quick else FULL)
    figures[2] = options.rss_edits if options.rss_edits is not None else figures[2]
    figures[3] = options.burst if options.burst is not None else figures[3]
    await shape_table(tuple(options.only.split(",")), tuple(figures))


async def startup_times() -> None:
    """Start to the ``initialize`` response (first start, warm, and a bare pygls server's) and to first diagnostics."""
    cold = await start_to_first_diagnostics(1_000)
    shared, os.environ["MARGIN_CACHE_DIR"] = os.environ["MARGIN_CACHE_DIR"], tempfile.mkdtemp(prefix="margin-bench-")
    cold_initialize = await start_to_initialize()  # with a code cache of its own, empty too
    os.environ["MARGIN_CACHE_DIR"] = shared
    await start_to_initialize(FLOOR)  # fills the floor's share of the code cache
    warm, floor = [], []
    for _ in range(STARTS):  # interleaved, so both see the same machine
        warm.append(await start_to_initialize() * 1e3)
        floor.append(await start_to_initialize(FLOOR) * 1e3)
    print(
        f"start to initialize response: first start after install {cold_initialize * 1e3:.0f} ms, "
        f"warm median {statistics.median(warm):.0f} ms (min {min(warm):.0f})  (budget 400 ms warm); "
        f"a bare pygls server: median {statistics.median(floor):.0f} ms (min {min(floor):.0f})"
    )
    print(
        f"start to first diagnostics, 1,000-line draft, first start after install (empty code cache): "
        f"{cold * 1e3:.0f} ms  (budget 600 ms)"
    )
    for label, extra in (("", ""), (", with a sweep (loads NumPy)", SWEEP)):
        starts = sorted([await start_to_first_diagnostics(1_000, extra) * 1e3 for _ in range(STARTS)])
        print(
            f"start to first diagnostics, 1,000-line draft{label}: median {statistics.median(starts):.0f} ms "
            f"(min {starts[0]:.0f}, max {starts[-1]:.0f}, {STARTS} starts)  (budget 600 ms)"
        )


async def startup_figures() -> None:
    """Start-up, the book-like session, cancellation and re-evaluation figures."""
    await startup_times()
    result = await interactive(10_000, edits=60, requests=60)
    monitored = await interactive(10_000, edits=30, requests=30, monitor=True)
    latencies = [x * 1e3 for x in result["latencies"]]  # type: ignore[union-attr]
    print(f"10,000-line draft, first diagnostics after open: {result['first'] * 1e3:.0f} ms")  # type: ignore[operator]
    print(
        f"edit -> diagnostics (client view), a digit changed in place: p50 {statistics.median(latencies):.1f} ms, "
        f"p95 {percentile(latencies, 0.95):.1f} ms  (budget p50 25, p95 50)"
    )
    typed = [x * 1e3 for x in result["typing"]]  # type: ignore[union-attr]
    print(
        f"typing near the top (each keystroke moves everything after it): p50 {statistics.median(typed):.1f} ms, "
        f"p95 {percentile(typed, 0.95):.1f} ms  (budget p50 25, p95 50)"
    )
    for name, samples in result["timings"].items():  # type: ignore[union-attr]
        millis = [x * 1e3 for x in samples]
        print(f"{name}: p50 {statistics.median(millis):.1f} ms, p95 {percentile(millis, 0.95):.1f} ms  (budget p95 10)")
    print(
        f"first hover on a formula call (derivation; imports SymPy off the event loop): "
        f"{result['first_hover'] * 1e3:.0f} ms"
    )  # type: ignore[operator]
    loop = monitored["loop"]
    print(
        f"longest event-loop turn, as lag of a 5 ms timer over the session: max {loop.max_lag_ms:.1f} ms, "  # type: ignore[attr-defined]
        f"p99 {loop.p99_lag_ms:.1f} ms, {loop.samples} samples  (budget 20 ms)"
    )  # type: ignore[attr-defined]
    print(f"server peak RSS: {result['rss']:.0f} MB  (budget 150 MB without JAX)")
    elapsed, stopped = await edit_during_first_analysis(10_000, 0.1)
    print(
        f"edit 100 ms into the first analysis of 10,000 lines: its diagnostics {elapsed * 1e3:.0f} ms later; "
        f"{stopped} stale analysis stopped part-way"
    )
    statements, all_statements, regions, total, parsed, chunks = reevaluated_per_edit(10_000)
    print(
        f"one edit re-evaluated {statements} of {all_statements} statements ({regions} of {total} regions) "
        f"and re-parsed {parsed} of {chunks} chunks"
    )


if __name__ == "__main__":
    asyncio.run(main())
