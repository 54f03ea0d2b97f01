"""Server state: open documents, analyses keyed by version, scheduling.

Analyses run in one worker thread on immutable text snapshots, so requests
keep being answered meanwhile.  An analysis starts as soon as the changes
already received are applied (no timed debounce: a burst is analysed once).
A result is stored only if its document is still at the version it analysed;
older work is dropped, never published.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scaling_core import (
    AnalysisCancelled,
    Config,
    DocumentAnalysis,
    LineIndex,
    Span,
    analyze_document,
)
from scaling_core.diagnostics import make_diagnostic
from scaling_core.document.analysis import ImportContext
from scaling_core.document.imports import ImportMemo
from scaling_core.document.incremental import RegionCache
from server.analysis.runner import AnalysisRunner, runner_for
from server.collector import (
    collector_held_for_analysis,
    hand_back_free_memory,
    keep_large_blocks,
    release_in_background,
)
from server.lsp.documents import Document, ImportReaders, OpenDocuments, OpenTexts
from server.lsp.query_cache import QueryCache
from server.lsp.scheduling import BudgetStops, LaterRelease, WorkerQueue
from server.lsp.trusted import Background
from server.measurements import LiveCache
from server.workspace import load_project, make_loader

log = logging.getLogger(__name__)
#: Drafts this long or longer have their dropped results (a replaced analysis; a closed draft's analysis and
#: region cache) freed off the event loop (10,000 lines, ~450,000 characters: ~3 ms to free at once; 20 MB:
#: ~150 ms for an analysis, 0.63-0.68 s for a closed draft's results).
RELEASE_IN_BACKGROUND_FROM = 1_000_000
#: Characters from which the server hands free memory back to the system after an analysis (``collector.
#: hand_back_free_memory``): shorter drafts are held within the memory budget, and faulting the pages in
#: again cost their keystrokes ~1 ms.
HAND_BACK_FROM = 5_000_000
#: Test hook (docs/security.md): the analysis of a document whose text contains this value raises.
FAULT_HOOK = "MARGIN_TEST_FAIL_ANALYSIS"


class State:
    """Documents, configuration and analyses for one client session."""

    def __init__(
        self,
        publish: Callable[..., None],
        failed: Callable[[Document, BaseException], None] = lambda document, error: None,
        prepare: Callable[[Document, DocumentAnalysis], object] | None = None,
        give_way: Callable[[Callable[[], bool]], Callable[[], bool]] | None = None,
    ) -> None:
        """``publish(document, analysis)`` runs on the event loop; with ``prepare``, it is called as
        ``publish(document, analysis, prepare(document, analysis))``, ``prepare`` running in the
        analysis thread (the conversion to the protocol's diagnostics: never on the loop).
        ``give_way(go_on)``: the question the preparation in pauses asks, giving way to the editor's
        messages (``traffic.EditorTraffic.giving_way``; without it, ``go_on`` itself)."""
        self.documents = OpenDocuments()
        #: Documents whose edits could not be applied: not checked until their whole text comes again.
        self.desynchronised: set[str] = set()
        self.analyses: dict[str, tuple[int, DocumentAnalysis]] = {}
        self.caches: dict[str, RegionCache] = {}
        #: What each document's latest analysis read through imports, and the loader's answers meanwhile.
        self.readers = ImportReaders()
        #: Imported drafts' analyses, shared by every importer (``scaling_core/document/imports.py``).
        self.import_memo = ImportMemo()
        #: Analyses stopped part-way because a newer version arrived.
        self.cancelled = 0
        #: Long drafts' dropped results freed off the event loop (``collector.release_in_background``).
        self.released_in_background = 0
        #: How many times the settings changed: the same text may now have other diagnostics.
        self.settings_generation = 0
        self.config = Config()
        self.root: Path | None = None
        #: Resolves imports: open documents first, then the disk (rebuilt when the root changes).
        self.loader = make_loader(None, OpenTexts(self.documents), display=str)
        self._publish = publish
        self._prepare = prepare
        self._give_way = give_way
        self._failed = failed
        self._fault = os.environ.get(FAULT_HOOK) or None
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._waiters: dict[tuple[str, int], list[asyncio.Future[DocumentAnalysis | None]]] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="margin-analysis")
        self._settings_ready: asyncio.Event | None = None
        #: Runs python calc blocks in the analysis process once the workspace is trusted.
        self._runner: AnalysisRunner | None = None
        self._background: Background | None = None
        self._stops = BudgetStops()
        #: Answers measure_* calls from the project's ``.margin/measurements.json``, as ``margin check`` does.
        self.measurements = LiveCache(None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue = WorkerQueue()
        #: Coverage and hover indexes of each document's latest analysis (``query_cache.py``).
        self.queries = QueryCache(self._executor)
        #: Replaced analyses of drafts shorter than RELEASE_IN_BACKGROUND_FROM, freed once the server is idle.
        self._later = LaterRelease(self._executor, self._analysing)

    def trusted_code(self) -> AnalysisRunner | None:
        """The analysis process's runner when the settings trust the workspace (made once, started lazily)."""
        if not self.config.trust:
            return None
        if self._runner is None:
            self._runner = runner_for(self.root, self.config)
        return self._runner

    def background_code(self) -> Background | None:
        """:meth:`trusted_code` for the document analyses: pending answers meanwhile, never a wait."""
        runner = self.trusted_code()
        if runner is None:
            return None
        if self._background is None or self._background.runner is not runner:
            self._background = Background(runner, self._trusted_answers_ready)
        return self._background

    def _trusted_answers_ready(self) -> None:
        """Called from the background thread: every pending block and question has its answer."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.recheck, "python")

    def pause(self) -> None:
        """Settings are changing: drop results and hold new analyses until :meth:`resume`."""
        if self._settings_ready is None:
            self._settings_ready = asyncio.Event()
        self._settings_ready.clear()
        self.settings_generation += 1
        for uri in [*self.analyses, *(uri for uri in self.caches if uri not in self.analyses)]:
            self._forget_results(uri)
        self.import_memo = ImportMemo()
        self.readers.forget_answers()
        self.queries.forget_all()

    def resume(self) -> None:
        """New settings are in place: re-check every open document."""
        if self._settings_ready is not None:
            self._settings_ready.set()
        for uri in list(self.documents):
            self.schedule(uri)

    def set_root(self, root: Path | None) -> list[str]:
        """Load the project configuration from the workspace root."""
        self.root = root
        self.loader = make_loader(root, OpenTexts(self.documents), display=str)
        if root is not None and self.measurements.cache.root != root:
            self.measurements = LiveCache(root)
        if root is None:
            return []
        project, problems = load_project(root)  # a bad key is left out and reported; the good ones apply
        self.config = project.config
        if project.config_path is not None:  # imports may read the project and its import_roots too
            roots = [project.root, *project.import_roots]
            self.loader = make_loader(root, OpenTexts(self.documents), display=str, roots=roots)
        return problems

    # -- documents -----------------------------------------------------------
    def analyze_now(self, document: Document) -> DocumentAnalysis | None:
        """Analyse a snapshot synchronously (runs in the worker thread), reusing unchanged regions.

        Returns None when a newer version (or a close) arrived meanwhile: the
        analysis stops at its next chunk or region instead of finishing work
        nobody will see, and keeps what it computed for the next one.
        """
        documents, uri = self.documents, document.uri
        if self.measurements.refresh():  # the cache changed on disk: measure_* calls are looked up again
            self.caches.pop(uri, None)
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self.measurements_changed, uri)
        opening = uri not in self.caches  # its first analysis (after a replaced one, the release hands memory back)
        cache = self.caches.setdefault(document.uri, RegionCache())
        context = ImportContext(self.loader, trusted=self.background_code(), memo=self.import_memo,
                                measurements=self.measurements, share=self.readers.is_read(document.path))  # fmt: skip
        context.loaded, context.checked = self.readers.answers(self.documents, self.loader)
        if document.buffer.length >= RELEASE_IN_BACKGROUND_FROM:
            keep_large_blocks()  # each version's text is joined anew: its blocks are reused
        document.buffer.ready_for_edits()  # here, off the event loop (a no-op after the first version)
        try:
            self._inject_fault(document)
            with collector_held_for_analysis():
                analysis = analyze_document(
                    document.text, document.path, self.config, context=context, cache=cache,
                    index=document.index, cancelled=lambda: documents.get(uri) is not document,
                )  # fmt: skip
        except AnalysisCancelled:
            self.cancelled += 1
            return None
        self.readers.record(uri, context.read())
        if opening and document.buffer.length >= HAND_BACK_FROM:
            hand_back_free_memory()  # what the first analysis and the opening message's decoding freed goes back
        return analysis

    def importers_of(self, uri: str) -> list[str]:
        """The other open documents that may read ``uri`` through an import (``ImportReaders.importers_of``)."""
        return self.readers.importers_of(uri, self.documents)

    def analyze_plain(self, document: Document) -> DocumentAnalysis:
        """Analyse without touching the per-document caches (workspace checks, other threads)."""
        self._inject_fault(document)
        context = ImportContext(self.loader, trusted=self.trusted_code(), measurements=self.measurements)
        return analyze_document(document.text, document.path, self.config, context=context)

    def _inject_fault(self, document: Document) -> None:
        if self._fault is not None and self._fault in document.text:
            raise RuntimeError(f"fault injected by {FAULT_HOOK}")

    def analyze_safely(self, document: Document) -> DocumentAnalysis:
        """:meth:`analyze_plain`, or when it raises (a bug) an analysis holding only an E999 diagnostic."""
        try:
            return self.analyze_plain(document)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: reported as E999, never a failed request
            log.error("analysis of %s failed", document.uri, exc_info=error)
            return _with_internal_error(DocumentAnalysis(document.path, document.text, LineIndex(document.text)), error)

    def _after_failure(self, document: Document, error: BaseException) -> DocumentAnalysis:
        """What is known when an analysis raised: a fresh analysis without the region cache, or
        if that fails too, nothing; with an E999 diagnostic either way.  Runs in the worker thread."""
        log.error("analysis of %s failed", document.uri, exc_info=error)
        self.caches.pop(document.uri, None)  # a cached region may be what broke it
        return _with_internal_error(self.analyze_safely(document), error)

    def _work(self, document: Document) -> tuple[DocumentAnalysis | None, object, BaseException | None]:
        """The worker thread's whole job for one version, in one hand-over from the event loop: the analysis
        (or what :meth:`_after_failure` makes of a failed one, with the error), then its coverage when the
        diagnostics need it and its prepared diagnostics, each only while the document is at that version."""
        failure = None
        try:
            analysis = self.analyze_now(document)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: requests are still answered
            analysis, failure = self._after_failure(document, error), error
        prepared, uri = None, document.uri
        if analysis is not None and self.config.coverage_diagnostics and self.documents.get(uri) is document:
            self.queries.coverage(uri, analysis)  # the published diagnostics need it: computed here, off the event loop
        if analysis is not None and self._prepare is not None and self.documents.get(uri) is document:
            prepared = self._prepare(document, analysis)
        return analysis, prepared, failure

    # -- scheduling ----------------------------------------------------------
    def schedule(self, uri: str) -> None:
        """(Re)start the analysis of ``uri``: it runs once the changes already received are applied."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.queries.edited(uri)
        self._loop = asyncio.get_running_loop()
        task = self._loop.create_task(self._run(uri))
        self._pending[uri] = task
        task.add_done_callback(self._log_failure)

    def measurements_changed(self, skip: str | None = None) -> None:
        """The measurement cache changed on disk: re-check every open document that measures (not ``skip``)."""
        self.measurements.refresh()
        self.recheck("measure", skip)

    def recheck(self, marker: str, skip: str | None = None) -> None:
        """Answers from outside the engine changed (the measurement cache, trusted code): re-check the open
        documents whose text holds ``marker`` (not ``skip``), without their region caches (a replayed region
        would keep the old answer) or imported drafts' analyses.  Runs on the event loop."""
        self.import_memo = ImportMemo()
        self.readers.forget_answers()
        for uri, document in list(self.documents.items()):
            if uri != skip and marker in document.text:
                self.caches.pop(uri, None)
                self.invalidate(uri)

    def invalidate(self, uri: str) -> None:
        """Re-check ``uri`` at its current version (an import changed): requests wait for it."""
        self._forget_results(uri, keep_cache=True)
        self.schedule(uri)

    @staticmethod
    def _log_failure(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("analysis failed", exc_info=task.exception())

    async def _run(self, uri: str) -> None:
        await asyncio.sleep(0)  # lets changes already received land first: a burst is analysed once
        if self._settings_ready is not None:
            await self._settings_ready.wait()
        document = self.documents.get(uri)
        if document is None:
            return
        async with self._queue.slot():  # scheduling.QUEUED_FOR_WORKER: a fan-out reaches the loop one by one
            work = asyncio.get_running_loop().run_in_executor(self._executor, self._work, document)
            analysis, prepared, failure = await work
        if failure is not None:
            self._failed(document, failure)
        current = self.documents.get(uri)
        if analysis is None or current is None or current.version != document.version:
            # Stale: a newer version is on its way (or the document closed, which answers its waiters).
            if current is not None and any(key[0] == uri for key in self._waiters):
                self.schedule(uri)  # requests wait for it even when edits do not start analyses
            return
        previous = self.analyses.get(uri)  # freed after publishing (~10k objects, 1.5-5 ms on 10,000 lines)
        self.analyses[uri] = (document.version, analysis)
        for key in [k for k in self._waiters if k[0] == uri and k[1] <= document.version]:
            for waiter in self._waiters.pop(key):
                if not waiter.done():
                    waiter.set_result(analysis)
        short = len(analysis.text) < RELEASE_IN_BACKGROUND_FROM  # a longer draft's first hover builds its indexes
        still_current: Callable[[], bool] | None = functools.partial(self._current, uri, analysis) if short else None
        if still_current is not None and self._give_way is not None:
            still_current = self._give_way(still_current)
        replaced = self.queries.replaced(uri, analysis, still_current, self.config.coverage_lenses)
        if self._prepare is None:
            self._publish(document, analysis)
        else:
            self._publish(document, analysis, prepared)
        if previous is not None:
            long = len(previous[1].text) >= RELEASE_IN_BACKGROUND_FROM
            box: list[object] = [(previous[1], replaced)]  # freed off the loop; the box holds the last reference
            del previous, replaced
            if long:
                release_in_background(box, hand_back=len(analysis.text) >= HAND_BACK_FROM)
                self.released_in_background += 1
            else:
                self._later.release(box)
        if self._stops.goes_on(uri, document.version, analysis):
            self.schedule(uri)  # stopped for time: the same version again, from where it stopped

    def _analysing(self) -> bool:
        """Whether an analysis is waiting or running."""
        return any(not task.done() for task in self._pending.values())

    def _current(self, uri: str, analysis: DocumentAnalysis) -> bool:
        """Whether ``analysis`` is still that of ``uri``'s current version (no edit since)."""
        document, stored = self.documents.get(uri), self.analyses.get(uri)
        return document is not None and stored is not None and stored[0] == document.version and stored[1] is analysis

    def _forget_results(self, uri: str, keep_cache: bool = False) -> None:
        """Drop the analysis of ``uri`` (and, unless ``keep_cache``, its region cache): at once, or for a draft
        of :data:`RELEASE_IN_BACKGROUND_FROM` characters or more, from a thread of its own
        (``collector.release_in_background``: closing a 20 MB draft froze the event loop for 0.63-0.68 s)."""
        stored = self.analyses.pop(uri, None)
        cache = None if keep_cache else self.caches.pop(uri, None)
        coverage = self.queries.forget(uri)  # it holds the analysis it was computed from
        document = self.documents.get(uri)
        size = max(len(stored[1].text) if stored is not None else 0, document.buffer.length if document else 0)
        if size >= RELEASE_IN_BACKGROUND_FROM and (stored is not None or cache is not None):
            box: list[object] = [(stored, cache, coverage)]
            del stored, cache, coverage
            release_in_background(box, hand_back=size >= HAND_BACK_FROM)  # a closed big draft's memory goes back
            self.released_in_background += 1

    async def analysis(self, uri: str) -> tuple[Document, DocumentAnalysis] | None:
        """The analysis of the current version of ``uri`` (waits for it if needed)."""
        document = self.documents.get(uri)
        if document is None:
            return None
        stored = self.analyses.get(uri)
        if stored is not None and stored[0] == document.version:
            return document, stored[1]
        waiter: asyncio.Future[DocumentAnalysis | None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault((uri, document.version), []).append(waiter)
        if uri not in self._pending or self._pending[uri].done():
            self.schedule(uri)
        analysis = await waiter
        if analysis is None:
            return None
        return self.documents.get(uri, document), analysis

    def desynchronise(self, uri: str) -> bool:
        """An edit to ``uri`` could not be applied: forget its text; False when it was not open."""
        if uri not in self.documents:
            return False
        self.close(uri)
        self.desynchronised.add(uri)
        return True

    def close(self, uri: str) -> None:
        """Forget a closed document."""
        self.desynchronised.discard(uri)
        self._forget_results(uri)  # while the document is there to say how long it is
        self.documents.pop(uri, None)
        for key in [k for k in self._waiters if k[0] == uri]:
            for waiter in self._waiters.pop(key):
                if not waiter.done():
                    waiter.set_result(None)  # requests about a closed document answer "nothing"
        self.readers.forget(uri)
        self._stops.forget(uri)
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()


def _with_internal_error(analysis: DocumentAnalysis, error: BaseException) -> DocumentAnalysis:
    """``analysis`` with one E999 diagnostic at the top of the document saying what failed."""
    if not any(d.code == "E999" for d in analysis.diagnostics):
        summary = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        message = f"internal error: {summary}; results here may be incomplete, please report it (see the server log)"
        analysis.diagnostics.insert(0, make_diagnostic("E999", message, Span(0, 0)))
    return analysis
