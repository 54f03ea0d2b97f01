"""Trusted code in the editor: diagnostics first, python calc block results when they arrive.

The analysis process needs about a second to start and import JAX, and a
block may take longer.  The editor must not wait for it: :class:`Background`
is the :class:`~scaling_core.external.TrustedCode` the server's analyses get.
What it already knows (a program run before, a question answered before) it
answers at once; anything else it hands to the
:class:`~server.analysis.runner.AnalysisRunner` in one background thread and
answers "not run: running trusted code…" meanwhile, so the analysis finishes
and is published with those blocks pending (T001 at each block, T003 at each
check that uses one of its functions).  When the background work is done,
``done`` is called once (not after each answer) and the server checks the
drafts with python calc blocks again, now with the answers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scaling_core.external import Answer, CellReport, Outcome, Program, ProgramReport, Question
from server.analysis.runner import AnalysisRunner

log = logging.getLogger(__name__)
#: What a pending block or question says meanwhile.
PENDING = "running trusted code…"


class Background:
    """The runner's answers when known; otherwise "pending", with the work started in the background."""

    def __init__(self, runner: AnalysisRunner, done: Callable[[], None]) -> None:
        self.runner = runner
        self._done = done
        self._reports: dict[str, ProgramReport] = {}
        self._answers: dict[Question, Answer] = {}
        self._pending: set[object] = set()
        self._lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="margin-trusted")

    def load(self, program: Program) -> ProgramReport:
        """The program's report if it has run; else start it and report every cell as pending."""
        digest = program.digest
        with self._lock:
            report = self._reports.get(digest)
            if report is not None:
                return report
            self._start(digest, lambda: self._keep_report(digest, self._load(program)))
        return ProgramReport(tuple(CellReport(Outcome.NOT_RUN, PENDING) for _ in program.cells))

    def ask(self, question: Question) -> Answer:
        """The answer if known; else start asking and answer "pending"."""
        with self._lock:
            answer = self._answers.get(question)
            if answer is not None:
                return answer
            self._start(question, lambda: self._keep_answer(question, self._ask(question)))
        return Answer(failure=(Outcome.NOT_RUN, PENDING))

    def close(self) -> None:
        """Stop the analysis process (the background thread ends with it)."""
        self.runner.close()
        self._worker.shutdown(wait=False, cancel_futures=True)

    # -- background ------------------------------------------------------------------
    def _start(self, key: object, work: Callable[[], None]) -> None:
        """Queue ``work`` once per key (the caller holds the lock)."""
        if key in self._pending:
            return
        self._pending.add(key)
        self._worker.submit(self._run, key, work)

    def _run(self, key: object, work: Callable[[], None]) -> None:
        try:
            work()
        finally:
            with self._lock:
                self._pending.discard(key)
                idle = not self._pending
            if idle:  # once the queue is empty: one re-check for a burst of answers
                self._done()

    def _load(self, program: Program) -> ProgramReport:
        try:
            return self.runner.load(program)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: the blocks read as not run, once
            log.error("running python calc blocks failed", exc_info=error)
            return ProgramReport(tuple(CellReport(Outcome.NOT_RUN, f"internal error: {error}") for _ in program.cells))

    def _ask(self, question: Question) -> Answer:
        try:
            return self.runner.ask(question)
        except Exception as error:  # noqa: BLE001 - a bug in Margin: the call reads as unknown, once
            log.error("asking the analysis process failed", exc_info=error)
            return Answer(failure=(Outcome.NOT_RUN, f"internal error: {error}"))

    def _keep_report(self, digest: str, report: ProgramReport) -> None:
        with self._lock:
            self._reports[digest] = report
            while len(self._reports) > 64:
                self._reports.pop(next(iter(self._reports)))

    def _keep_answer(self, question: Question, answer: Answer) -> None:
        with self._lock:
            self._answers[question] = answer
            while len(self._answers) > 4096:
                self._answers.pop(next(iter(self._answers)))


def workspace_trusted(settings: Any) -> bool | None:
    """Whether the editor trusts the folder (``workspaceTrusted``: VS Code's workspace trust); None when not said.

    It only restricts: False means no Python runs whatever the project or the ``trust`` setting say
    (docs/jax.md, "Trust: when Python runs"); True grants nothing by itself.
    """
    if not isinstance(settings, dict):
        return None
    table = settings.get("margin", settings)
    if not isinstance(table, dict):
        return None
    said = table.get("workspaceTrusted", table.get("workspace_trusted"))
    return said if isinstance(said, bool) else None
