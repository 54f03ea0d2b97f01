"""What the editor's queries compute from each document's latest analysis, kept with it.

A document's coverage (for the lenses and the coverage diagnostics) is
computed once per analysis; a hover on a definition asks only which problems
test that definition (``coverage.definition_coverage``).  When the author pauses, what the
first hover on the analysis would build (its indexes, which problems cover
what: ``hover.prepare_hover``) is built ahead in the analysis thread, so that
hover answers from it.  :class:`server.lsp.state.State` holds one
:class:`QueryCache` and tells it when a document's analysis is replaced,
edited or closed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import Executor

from scaling_core import DocumentAnalysis
from scaling_core.queries.coverage import coverage_unless_stopped, definition_coverage, document_coverage
from scaling_core.queries.coverage_model import Concept, FileCoverage
from scaling_core.queries.hover import prepare_hover
from server.lsp.scheduling import WhenQuiet

log = logging.getLogger(__name__)


class QueryCache:
    """Each document's coverage with the analysis it was computed from, and the hover preparation in pauses."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self._coverage: dict[str, tuple[DocumentAnalysis, FileCoverage]] = {}
        self._quiet = WhenQuiet()
        #: Analyses whose hover indexes were built while the author paused.
        self.prepared = 0

    def coverage(self, uri: str, analysis: DocumentAnalysis) -> FileCoverage:
        """The coverage of ``analysis`` by the draft's own problems, computed once per analysis.

        Safe from any thread: two callers racing compute it twice and keep one.  A bug
        in the coverage engine is logged and reads as no coverage (no lens, no diagnostic).
        """
        found = self._coverage_until(uri, analysis, None)
        assert found is not None  # nothing stops it
        return found

    def _coverage_until(
        self, uri: str, analysis: DocumentAnalysis, go_on: Callable[[], bool] | None
    ) -> FileCoverage | None:
        """:meth:`coverage`; with ``go_on``, None (and nothing kept) once it says no."""
        stored = self._coverage.get(uri)
        if stored is not None and stored[0] is analysis:
            return stored[1]
        try:
            found = document_coverage(analysis) if go_on is None else coverage_unless_stopped(analysis, go_on)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: the editor keeps working without coverage
            log.error("coverage of %s failed", uri, exc_info=error)
            found = FileCoverage(analysis.path, ())
        if found is not None:
            self._coverage[uri] = (analysis, found)
        return found

    def tested(self, uri: str, analysis: DocumentAnalysis, start: int) -> Concept | None:
        """The coverage concept of the definition whose name starts at ``start`` (what a hover shows).

        For that definition alone (``coverage.definition_coverage``: which problems cover what is shared with
        the lenses' coverage of the same analysis): a hover after an edit costs ~5 ms of coverage on 10,000
        lines instead of the whole draft's ~30-100 ms.
        """
        try:
            return definition_coverage(analysis, start)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: the hover goes on without coverage
            log.error("coverage of %s failed", uri, exc_info=error)
            return None

    def replaced(
        self, uri: str, analysis: DocumentAnalysis, still_current: Callable[[], bool] | None, lenses: bool
    ) -> tuple[DocumentAnalysis, FileCoverage] | None:
        """``analysis`` is now ``uri``'s: an older analysis's coverage is let go (returned: the caller frees it);
        with ``still_current`` (the draft is not too long to prepare; safe to call from the analysis thread),
        its hover indexes, and with ``lenses`` (coverage lenses are on) its coverage, are built once ``uri`` is
        quiet, while it still is."""
        older = None
        if uri in self._coverage and self._coverage[uri][0] is not analysis:
            older = self._coverage.pop(uri)  # an older analysis's: not kept alive
        if still_current is not None:
            self._quiet.after_quiet(uri, functools.partial(self._prepare, uri, analysis, still_current, lenses))
        return older

    def edited(self, uri: str) -> None:
        """``uri`` changed: its analysis is about to be replaced, nothing is prepared for it."""
        self._quiet.cancel(uri)

    def forget(self, uri: str) -> tuple[DocumentAnalysis, FileCoverage] | None:
        """``uri`` closed or its results were dropped: what was kept for it (the caller frees it)."""
        self._quiet.cancel(uri)
        return self._coverage.pop(uri, None)

    def forget_all(self) -> None:
        """The settings changed: every coverage may differ."""
        self._coverage.clear()

    def _prepare(self, uri: str, analysis: DocumentAnalysis, still_current: Callable[[], bool], lenses: bool) -> None:
        if not still_current():
            return
        # In the analysis thread, a part at a time: an edit meanwhile waits for one part at most, then it stops.
        job = functools.partial(self._prepare_parts, uri, analysis, still_current, lenses)
        work = asyncio.get_running_loop().run_in_executor(self._executor, job)
        work.add_done_callback(self._prepared)

    def _prepare_parts(
        self, uri: str, analysis: DocumentAnalysis, still_current: Callable[[], bool], lenses: bool
    ) -> bool:
        if not prepare_hover(analysis, still_current):
            return False
        if lenses:
            # What the heading lenses show (the editor asks for them after edits), a slice at a time: an edit
            # meanwhile waits for one slice (not the whole draft's coverage, 20-75 ms on 10,000 lines).
            if self._coverage_until(uri, analysis, still_current) is None:
                return False
            if not still_current():  # replaced or closed meanwhile: not kept for a version gone
                stored = self._coverage.get(uri)
                if stored is not None and stored[0] is analysis:
                    self._coverage.pop(uri, None)
        return True

    def _prepared(self, work: asyncio.Future[bool]) -> None:
        if work.cancelled():
            return
        if work.exception() is not None:  # a bug in Margin: the first hover builds what it needs itself
            log.error("preparing hovers failed", exc_info=work.exception())
            return
        self.prepared += work.result()
