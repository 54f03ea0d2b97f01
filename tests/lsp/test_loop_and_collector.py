"""Event-loop lag monitoring, the collector pause around module loading, and big results freed off the loop."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
import weakref

import pytest
from lsprotocol import types

from scaling_core import DocumentAnalysis, analyze_document
from scaling_core.document.effects import Effects
from scaling_core.document.incremental import RegionCache
from scaling_core.document.results import Binding
from scaling_core.document.segments import Segments
from scaling_core.document.sorted_on_read import SortedOnRead
from server.collector import collector_paused, release_in_background
from server.lsp.loop_monitor import LoopMonitor
from tests.lsp.conftest import RecordingClient, diagnostics, open_document
from tests.lsp.test_faults import RawServer


async def _samples(monitor: LoopMonitor, more_than: int) -> None:
    while monitor.samples <= more_than:
        await asyncio.sleep(0.001)


async def test_a_blocked_loop_shows_as_lag() -> None:
    monitor = LoopMonitor()
    monitor.start()
    await _samples(monitor, 3)
    quiet = monitor.stats()["max_lag_ms"]
    time.sleep(0.08)  # a handler that holds the loop for 80 ms
    await _samples(monitor, monitor.samples)
    stats = monitor.stats()
    assert stats["max_lag_ms"] >= 70 > quiet
    assert stats["samples"] == monitor.samples and stats["p99_lag_ms"] <= stats["max_lag_ms"]


def test_the_lag_percentile_reads_the_histogram() -> None:
    monitor = LoopMonitor()
    for lag in [0.04] * 98 + [3.27, 81.5]:
        monitor.record(lag)
    assert monitor.stats() == {"samples": 100, "max_lag_ms": 81.5, "p99_lag_ms": 3.2}
    assert len(monitor.counts) == 3  # memory by distinct tenth, not by sample


def test_the_lag_figures_start_over_when_reset() -> None:
    monitor = LoopMonitor()
    for lag in (0.5, 120.0):
        monitor.record(lag)
    monitor.reset()
    monitor.record(0.25)
    assert monitor.stats() == {"samples": 1, "max_lag_ms": 0.25, "p99_lag_ms": 0.2}


def test_server_stats_can_start_the_lag_figures_over() -> None:
    # The benchmark reads the lag of opening a long draft, then of typing in it, apart.
    server = RawServer(env={"MARGIN_LOOP_MONITOR": "1"})
    try:
        server.initialize()
        while (stats := server.call("margin/serverStats", {})["result"])["loop"]["samples"] < 200:
            pass  # one request after another until the monitor has a second of samples
        read = server.call("margin/serverStats", {"resetLoop": True})["result"]["loop"]
        assert read["samples"] >= stats["loop"]["samples"]  # the figures until now, then they start over
        after = server.call("margin/serverStats", {})["result"]["loop"]
        assert after["samples"] < read["samples"]
        unchanged = server.call("margin/serverStats", {"resetLoop": False})["result"]["loop"]
        assert unchanged["samples"] >= after["samples"]
    finally:
        server.process.kill()
        server.process.wait()


def test_collector_is_paused_inside_and_new_modules_are_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    # The collector's state is the process's: an analysis finishing in another thread (an earlier test's)
    # freezes objects too, so this counts the freezes asked for from this thread instead of reading
    # gc.get_freeze_count().
    here = threading.get_ident()
    freezes: list[int] = []
    real_freeze = gc.freeze

    def freeze() -> None:
        if threading.get_ident() == here:
            freezes.append(len(sys.modules))
        real_freeze()

    monkeypatch.setattr(gc, "freeze", freeze)
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() and freezes == []  # nothing imported: nothing frozen
        sys.modules.pop("colorsys", None)
        with collector_paused():
            import colorsys  # noqa: F401
        assert gc.isenabled() and len(freezes) == 1 and "colorsys" in sys.modules
    finally:
        gc.unfreeze()


async def test_server_stats_without_the_monitor(fresh_client: RecordingClient) -> None:
    client = fresh_client  # a server of its own: nothing cancelled yet
    stats = await client.protocol.send_request_async("margin/serverStats", {})
    assert stats.loop is None and stats.analyses_cancelled == 0
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier("file:///none.md"), types.Position(0, 0))
    )
    assert hover is None


async def test_keystrokes_leave_no_handler_futures_behind(fresh_client: RecordingClient) -> None:
    # pygls kept the future of every didChange (a notification nothing answers): the server grew with each keystroke.
    client = fresh_client
    uri = await open_document(client, "typing.md", "# Typing\n\n```calc\nx = 2\n```\n")
    await diagnostics(client, uri, 1)
    for version in range(2, 102):
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, 8), types.Position(0, 8)), text="x"
        )
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
        )
    await diagnostics(client, uri, 101)
    stats = await client.protocol.send_request_async("margin/serverStats", {})
    assert stats.handler_futures <= 2  # this request's own, at most one more; before: one per keystroke


async def test_a_burst_of_messages_already_read_still_gives_the_loop_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    # A thousand keystrokes sent at once arrive in one read: dispatched without a break they were one
    # 200 ms turn in a 20 MB draft.  Here 100 messages whose handling takes ~1 ms each.
    import json
    import threading

    from server.lsp import transport

    body = json.dumps({"jsonrpc": "2.0", "method": "x"}).encode()
    burst = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body) for _ in range(100))
    chunks = [burst, b""]
    handled: list[int] = []

    async def read() -> bytes:
        return chunks.pop(0)

    def slow_dispatch(protocol: object, body: bytes, frames: object) -> None:
        time.sleep(0.001)  # a handler's work
        handled.append(len(handled))

    monkeypatch.setattr(transport, "dispatch", slow_dispatch)
    monitor = LoopMonitor()
    monitor.start()
    await _samples(monitor, 3)
    await transport.serve(object(), read, threading.Event())  # type: ignore[arg-type]
    await _samples(monitor, monitor.samples)
    assert len(handled) == 100
    assert monitor.stats()["max_lag_ms"] < 40  # one turn of ~100 ms without the breaks


def _analysis_with_moved_parts() -> DocumentAnalysis:
    """An analysis whose results are partly replayed at new offsets (moved parts not yet built)."""
    sections = "".join(
        f"## S{n}\n\n```calc\nx_{n} = {n + 2} * 3\n```\n\nSo `{n + 2} * 3 = {3 * (n + 2)}`.\n\n" for n in range(60)
    )
    cache = RegionCache()
    analyze_document(sections, "moved.md", cache=cache)
    return analyze_document("Intro.\n\n" + sections, "moved.md", cache=cache)


def test_an_analysis_lists_what_it_holds_without_building_moved_parts() -> None:
    analysis = _analysis_with_moved_parts()
    assert isinstance(analysis.values, Segments) and any(type(p) is not list for p in analysis.values.parts())
    parts = analysis.values.parts()
    held = analysis.held_objects()
    assert analysis.values.parts() == parts  # nothing was moved into place by listing it
    ids = {id(item) for item in held}
    for item in [*analysis.bindings, *analysis.exports.values(), *analysis.diagnostics, *analysis.problems]:
        assert id(item) in ids
    for results in (analysis.values, analysis.checks, analysis.references):
        assert isinstance(results, Segments)
        assert all(id(p) in ids for p in results.parts() if type(p) is not list)


def test_an_analysis_lists_its_checks_out_of_order_without_sorting_them() -> None:
    # A claim that waits for a name below adds its check at the end: the checks are sorted when first read.
    # Releasing the analysis (which nobody reads any more) must not sort them: ~20 ms for 30,000 checks,
    # holding the interpreter lock while the next version's analysis waits for it.
    sections = "".join(f"So `{n} * 3 = {3 * n}`.\n\n" for n in range(40))
    analysis = analyze_document(f"It is 6<!-- = t -->.\n\n{sections}```calc\nt = 6\n```\n", "late.md")
    checks = analysis.checks
    assert isinstance(checks, SortedOnRead) and checks.contents()[1] is False
    held = analysis.held_objects()
    assert checks.contents()[1] is False  # still as added: listing it sorted nothing
    ids = {id(item) for item in held}
    source = checks.contents()[0]
    assert isinstance(source, Segments) and all(type(part) is list for part in source.parts())  # no cache: none moved
    added = [check for part in source.parts() for check in part]
    assert len(added) == 41 and all(id(check) in ids for check in added)
    assert [c.status for c in checks] == ["pass"] * 41 and checks[0].span.start < checks[1].span.start


def _alive(ids: set[int]) -> list[Binding]:
    """The definitions among ``ids`` still in memory (a definition has slots, so no weak reference to it)."""
    gc.collect()
    return [item for item in gc.get_objects() if type(item) is Binding and id(item) in ids]


def test_a_released_analysis_is_freed_and_what_others_hold_is_left_whole() -> None:
    analysis = _analysis_with_moved_parts()
    kept = analysis.bindings[5]
    bindings = {id(b) for b in analysis.bindings if b is not kept}
    assert len(_alive(bindings)) == len(bindings) >= 50  # the check sees them while they are held
    gone = weakref.ref(analysis)
    release_in_background([analysis])
    del analysis
    _join_release_threads()
    assert gone() is None and not _alive(bindings)  # freed: the definitions, and the analysis itself
    assert kept.name == "x_5" and kept.value is not None  # still held here: untouched


def test_a_released_region_cache_is_freed_and_what_others_hold_is_left_whole() -> None:
    # A region cache lists nothing itself: the release walks it (its tables, their runs, each run's steps).
    sections = "".join(
        f"## S{n}\n\n```calc\nx_{n} = {n + 2} * 3\n```\n\nSo `{n + 2} * 3 = {3 * (n + 2)}`.\n\n" for n in range(60)
    )
    cache = RegionCache()
    analysis = analyze_document(sections, "cache.md", cache=cache)
    kept = analysis.bindings[7]  # the cache's records hold this definition too
    recorded = [
        b for run in cache._runs.values() for step in run.steps if isinstance(step, Effects) for b in step.bindings
    ]
    assert len(recorded) >= 50 and any(b is kept for b in recorded)
    bindings = {id(b) for b in recorded if b is not kept}
    assert len(_alive(bindings)) == len(bindings)
    gone = weakref.ref(cache)
    del recorded, analysis
    release_in_background([cache])
    del cache
    _join_release_threads()
    assert gone() is None and not _alive(bindings)  # freed: the cache and the definitions its runs recorded
    assert kept.name == "x_7" and kept.value is not None and kept.span.start > 0  # still held here: untouched


class _Node:
    def __init__(self, parts: list[_Node]) -> None:
        self.parts = parts


def _join_release_threads() -> None:
    for thread in [t for t in threading.enumerate() if t.name == "margin-release"]:
        thread.join(timeout=60)


def test_a_release_frees_what_it_alone_holds_and_leaves_the_rest_whole() -> None:
    shared = _Node([_Node([]) for _ in range(40)])  # held by the test too: let go of, never taken apart
    alone = _Node([_Node([_Node([])]) for _ in range(40)])
    gone = [weakref.ref(alone), *(weakref.ref(node) for node in alone.parts)]
    release_in_background([_Node([shared, alone])])
    del alone
    _join_release_threads()
    assert all(ref() is None for ref in gone)
    assert len(shared.parts) == 40 and all(node.parts == [] for node in shared.parts)


def _figure_printed_by(script: str, mode: str) -> int:
    """The number ``script`` prints, run in a fresh interpreter with ``mode`` as its argument (glibc only:
    the C library's blocks are what it measures)."""
    import subprocess

    from server.collector import _glibc

    if not _glibc():
        pytest.skip("not glibc")
    run = subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return int(run.stdout)


_FAULTS_OF_A_BLOCK_MADE_TWICE = """
import resource, sys
from server.collector import keep_large_blocks
if sys.argv[1] == "kept":
    keep_large_blocks()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
block = b"x" * 40_000_000  # a 20 MB draft's text, joined, is a 40 MB block
del block
before = faults()
block = b"x" * 40_000_000
print(faults() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kept blocks are glibc's")
@pytest.mark.parametrize("mode", ["kept", "default"])
def test_a_large_block_made_again_reuses_the_pages_of_the_freed_one(mode: str) -> None:
    """With the blocks kept, a large block made again after one was freed reuses its pages (no page faults);
    without, the C library gives it fresh pages (~10,000 faults: the premise, checked on this platform)."""
    faults = _figure_printed_by(_FAULTS_OF_A_BLOCK_MADE_TWICE, mode)
    assert faults < 1_000 if mode == "kept" else faults > 5_000


_MEMORY_HANDED_BACK = """
import resource, sys
from server.collector import hand_back_free_memory, keep_large_blocks
keep_large_blocks()  # as the language server does for a big draft: freed blocks are kept
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize()
blocks = [b"x" * 2_000_000 for _ in range(100)]  # 200 MB from the C library's heap
del blocks
before = resident()
if sys.argv[1] == "handed back":
    hand_back_free_memory()
print(before - resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kept blocks are glibc's")
@pytest.mark.parametrize("mode", ["handed back", "kept"])
def test_freed_memory_goes_back_to_the_system_when_handed_back(mode: str) -> None:
    """After an analysis of a big draft the server hands back what the C library holds free; without, the
    freed blocks stay resident (the premise, checked on this platform)."""
    returned = _figure_printed_by(_MEMORY_HANDED_BACK, mode)
    assert returned > 150_000_000 if mode == "handed back" else returned < 20_000_000


_HEAPS_OF_SIX_THREADS = """
import ctypes, os, sys, tempfile, threading
from server.collector import share_heaps
if sys.argv[1] == "shared":
    share_heaps()
started, counted = threading.Barrier(7), threading.Barrier(7)
def allocate():
    kept = [bytearray(4096) for _ in range(100)]  # over pymalloc's limit: from the C library's heap
    started.wait()
    counted.wait()
threads = [threading.Thread(target=allocate) for _ in range(6)]
for thread in threads:
    thread.start()
started.wait()  # six threads alive, each having allocated
with tempfile.TemporaryFile() as report:  # malloc_stats writes one "Arena N:" paragraph per heap to stderr
    saved = os.dup(2)
    os.dup2(report.fileno(), 2)
    ctypes.CDLL(None).malloc_stats()
    os.dup2(saved, 2)
    report.seek(0)
    print(report.read().decode().count("Arena "))
counted.wait()
for thread in threads:
    thread.join()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the heaps are glibc's")
@pytest.mark.parametrize("mode", ["shared", "default"])
def test_threads_share_two_heaps_once_asked(mode: str) -> None:
    """Once the server shares heaps, six allocating threads use two; by default the C library makes one per
    thread (the premise, checked on this platform)."""
    heaps = _figure_printed_by(_HEAPS_OF_SIX_THREADS, mode)
    assert heaps <= 2 if mode == "shared" else heaps >= 6
