"""``AnalysisRunner``: the engine's :class:`~scaling_core.external.TrustedCode`, backed by the analysis process.

It remembers every answer by content: a program's report by its digest, a
question's answer by (question, JAX version).  So a keystroke that changes no
python calc block and no argument never reaches the process, and the process
is started only when a trusted draft has a python calc block (lazily, on the
first :meth:`AnalysisRunner.load`).  When the process has been replaced (it
was killed at a deadline or died), programs are loaded into the new one again
before a question about them is sent.

Failures are answers too, remembered like the others (a block that loops
forever must not cost every keystroke a deadline): a cell that did not finish
is ``not-run`` with the reason, the cells after it are not run, and a question
that timed out is unknown with the reason.  Editing the block, or a new
runner (restarting the server, the next ``margin check``), tries again.
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from scaling_core.config import Config
from scaling_core.external import Answer, CellReport, Outcome, Program, ProgramReport, Question
from server.analysis.process import AnalysisProcess, ProcessFailure

#: Seconds the python calc blocks of one draft may take to run.
LOAD_SECONDS = 60.0
#: Seconds one question (tracing and lowering one function) may take.
ASK_SECONDS = 60.0
#: Answers kept (each is a few numbers).
KEEP_ANSWERS = 4096


class AnalysisRunner:
    """Runs trusted code in a separate analysis process, caching by content."""

    def __init__(
        self,
        cwd: str | None = None,
        *,
        load_seconds: float = LOAD_SECONDS,
        ask_seconds: float = ASK_SECONDS,
        command: list[str] | None = None,
    ) -> None:
        self.process = AnalysisProcess(command, cwd)
        self.load_seconds = load_seconds
        self.ask_seconds = ask_seconds
        self._programs: OrderedDict[str, tuple[Program, ProgramReport]] = OrderedDict()
        self._answers: OrderedDict[tuple[Any, ...], Answer] = OrderedDict()
        #: digest -> the process generation it was loaded into.
        self._loaded: dict[str, int] = {}
        self._lock = threading.RLock()
        #: Requests sent to the process (tests read it: a cached answer sends none).
        self.requests = 0

    def close(self) -> None:
        """Stop the analysis process."""
        self.process.close()

    # -- TrustedCode -----------------------------------------------------------------
    def load(self, program: Program) -> ProgramReport:
        """Run the program's cells (once per digest while the report is kept)."""
        digest = program.digest
        with self._lock:
            kept = self._programs.get(digest)
            if kept is not None:
                self._programs.move_to_end(digest)
                return kept[1]
            report = self._send_load(program)
            self._programs[digest] = (program, report)
            while len(self._programs) > 64:
                self._programs.popitem(last=False)
            return report

    def ask(self, question: Question) -> Answer:
        """Answer a question about a loaded program's function (cached by content and JAX version)."""
        with self._lock:
            key = (question, self.process.hello.get("jax"))
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
                return found
            kept = self._programs.get(question.program)
            if kept is None:
                return Answer(failure=(Outcome.NOT_RUN, "its python calc blocks have not been run"))
            if self._loaded.get(question.program) != self.process.generation or not self.process.running:
                report = self._send_load(kept[0])  # the process was replaced: load the program again
                if any(cell.outcome == Outcome.NOT_RUN for cell in report.cells):
                    return Answer(failure=(Outcome.NOT_RUN, "its python calc blocks could not be run again"))
            answer = self._send_ask(question)
            self._answers[(question, self.process.hello.get("jax"))] = answer
            while len(self._answers) > KEEP_ANSWERS:
                self._answers.popitem(last=False)
            return answer

    # -- requests --------------------------------------------------------------------
    def _send_load(self, program: Program) -> ProgramReport:
        count = len(program.cells)
        message = {"op": "load", "program": program.digest, "cells": list(program.cells)}
        self.requests += 1
        try:
            replies = self.process.request(message, self.load_seconds)
        except ProcessFailure as failure:
            return _unfinished(failure, count)
        reports: dict[int, CellReport] = {}
        for reply in replies:
            if reply.get("kind") == "cell" and isinstance(reply.get("index"), int):
                reports[reply["index"]] = _cell_report(reply)
        final = replies[-1]
        functions = frozenset(str(f) for f in final.get("functions", ()))
        missing = CellReport(Outcome.NOT_RUN, "the analysis process did not report on it")
        self._loaded[program.digest] = self.process.generation
        return ProgramReport(tuple(reports.get(i, missing) for i in range(count)), functions)

    def _send_ask(self, question: Question) -> Answer:
        message = {
            "op": "ask", "kind": question.kind, "program": question.program, "function": question.function,
            "args": [[arg.dtype, list(arg.dims)] for arg in question.args], "target": question.target,
        }  # fmt: skip
        self.requests += 1
        try:
            reply = self.process.request(message, self.ask_seconds)[-1]
        except ProcessFailure as stopped:
            return Answer(failure=(Outcome.NOT_RUN, str(stopped)))
        failed = reply.get("failure")
        if failed:
            outcome = Outcome.ERROR if failed[0] == "error" else Outcome.NOT_RUN
            return Answer(failure=(outcome, str(failed[1])))
        values = {str(k): float(v) for k, v in dict(reply.get("values", {})).items()}
        unknown = {str(k): str(v) for k, v in dict(reply.get("unknown", {})).items()}
        return Answer(values, unknown)


def runner_for(root: Path | None, config: Config) -> AnalysisRunner | None:
    """A runner for a workspace whose settings trust it (None otherwise), stopped when this process exits.

    Creating it starts nothing: the process starts when a draft has a python calc block.
    """
    if not config.trust:
        return None
    runner = AnalysisRunner(str(root) if root is not None else None)
    atexit.register(runner.close)
    return runner


def _cell_report(reply: dict[str, Any]) -> CellReport:
    outcome = {"ok": Outcome.OK, "error": Outcome.ERROR}.get(str(reply.get("outcome")), Outcome.NOT_RUN)
    return CellReport(outcome, str(reply.get("message", "")), int(reply.get("line") or 0))


def _unfinished(failure: ProcessFailure, count: int) -> ProgramReport:
    """The cells that finished before the process failed keep their report; the next one gets the reason."""
    done = {r["index"]: _cell_report(r) for r in failure.partial if r.get("kind") == "cell"}
    cells = []
    for index in range(count):
        if index in done and done[index].outcome != Outcome.OK:
            cells.append(done[index])
        elif index in done:
            cells.append(CellReport(Outcome.NOT_RUN, "a later block did not finish, so the process was stopped"))
        elif index == len(done):
            cells.append(CellReport(Outcome.NOT_RUN, str(failure)))
        else:
            cells.append(CellReport(Outcome.NOT_RUN, "an earlier block did not finish"))
    return ProgramReport(tuple(cells))
