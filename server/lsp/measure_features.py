"""Measurements in the editor: "Run measurement" / "Re-measure" code lenses, run in the background.

Each ``measure_*`` call the analysis evaluated gets a code lens
(``scaling_core/queries/measured.py``): "▶ Run measurement" when the cache has
nothing for it, "↻ Re-measure" when it has (or had, for an older version of
the call), "■ Cancel measurement" while it runs.  The lens's command,
``margin.measure``, finds the call's request as ``margin measure`` does
(``server/measure_jobs.py``), answers at once, and times it in a thread on
a target of ``[tool.margin.targets]`` (the one whose ``chip`` the call names,
else ``local``) with the same gang of workers; diagnostics never wait for it.
It reports ``$/progress`` (begin, report, end) when the client supports it, and
cancelling that progress, or ``margin.cancelMeasurement``, kills the workers.
When it finishes, the cache entry is written and every open draft that
measures is checked again (``State.measurements_changed``).

The cache file changing on disk (``margin measure`` in a terminal) is noticed
at the next analysis by its modification time, or at once when the client
reports it (``workspace/didChangeWatchedFiles``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from server.lsp.server import MarginServer

if TYPE_CHECKING:  # no engine import at the top: registering needs none (server/lsp/features.py)
    from scaling_core import DocumentAnalysis
    from server.lsp.convert import PositionConverter
    from server.lsp.documents import Document
    from server.measure_jobs import Job
    from server.worker.gang import Gang

log = logging.getLogger(__name__)
MEASURE_COMMAND = "margin.measure"
CANCEL_COMMAND = "margin.cancelMeasurement"
#: How ``margin measure`` times a kernel by default (a command may pass its own ``method``).
DEFAULT_METHOD = {"min_samples": 20, "min_seconds": 0.5, "warmup": 3}
_tokens = itertools.count(1)


@dataclass
class Run:
    """One measurement running in the background."""

    uri: str
    call: str
    target: str
    token: str | None = None
    gang: Gang | None = None
    cancelled: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """Stop it: kill its workers (the thread then reports it cancelled)."""
        self.cancelled = True
        gang = self.gang
        if gang is not None:
            gang.stop()


#: Measurements running now, by (uri, the call as written).
RUNNING: dict[tuple[str, str], Run] = {}


def lenses(
    ls: MarginServer, document: Document, analysis: DocumentAnalysis, converter: PositionConverter
) -> list[types.CodeLens]:
    """The code lens over each ``measure_*`` call of one analysed version."""
    from scaling_core.queries.measured import measure_sites

    found = []
    for site in measure_sites(analysis):
        call = analysis.text[site.span.start : site.span.end]
        argument = {"uri": document.uri, "version": document.version, "offset": site.span.start, "call": call}
        if (document.uri, call) in RUNNING:
            command = types.Command("■ Cancel measurement", CANCEL_COMMAND, arguments=[argument])
        else:
            command = types.Command(site.lens_title, MEASURE_COMMAND, arguments=[argument])
        found.append(types.CodeLens(converter.range(site.span), command))
    return found


def register(server: MarginServer) -> None:
    """Register the measurement commands and the cache watcher on ``server``."""

    @server.command(MEASURE_COMMAND)
    async def run_measurement(ls: MarginServer, *args: Any) -> dict[str, Any]:
        """Start measuring the call an argument names (``uri``, ``offset`` or ``call``); answers at once."""
        wanted = args[0] if args and isinstance(args[0], dict) else {}
        uri, call = str(wanted.get("uri", "")), str(wanted.get("call", ""))
        document = ls.state.documents.get(uri)
        if document is None:
            return _refused(ls, f"{uri} is not open")
        if (uri, call) in RUNNING:
            return {"status": "running"}
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(None, _resolve, ls, document, wanted)
        if isinstance(found, str):
            return _refused(ls, found)
        job, target = found
        run = Run(uri, call or job.request.call, target.name)
        RUNNING[(uri, run.call)] = run
        ls.refresh_code_lenses()
        run.token = await _begin_progress(ls, run, job)
        method = {**DEFAULT_METHOD, **dict(wanted.get("method") or {})}
        thread = threading.Thread(target=_work, args=(ls, loop, run, job, target, method),
                                  name="margin-measure", daemon=True)  # fmt: skip
        thread.start()
        return {"status": "started", "request": job.request.key, "target": target.name, "token": run.token}

    @server.command(CANCEL_COMMAND)
    def cancel_measurement(ls: MarginServer, *args: Any) -> dict[str, Any]:
        """Cancel the measurement of the call an argument names (``uri`` and ``call``)."""
        wanted = args[0] if args and isinstance(args[0], dict) else {}
        run = RUNNING.get((str(wanted.get("uri", "")), str(wanted.get("call", ""))))
        if run is None:
            return {"status": "not running"}
        run.cancel()
        return {"status": "cancelled"}

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: MarginServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("/.margin/measurements.json") for change in params.changes):
            if ls.state.measurements.refresh():
                ls.state.measurements_changed()


def _refused(ls: MarginServer, why: str) -> dict[str, Any]:
    ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"Margin: not measured: {why}"))
    return {"status": "refused", "reason": why}


def _resolve(ls: MarginServer, document: Document, wanted: dict[str, Any]) -> tuple[Job, Any] | str:
    """The job of the call ``wanted`` names, and the target to run it on; or why there is none."""
    from server.measure_jobs import jobs_of_text, plan  # only when measuring: keeps start-up light
    from server.measurements import MeasurementCache
    from server.worker.transports import find_target, parse_targets

    state = ls.state
    root = state.measurements.cache.root
    cache = MeasurementCache(root)
    jobs = list(jobs_of_text(document.text, document.path, state.config, state.loader, cache, {}).values())
    offset, call = wanted.get("offset"), str(wanted.get("call", ""))
    same = wanted.get("version") == document.version
    job = next((j for j in jobs if same and j.request.span.start == offset), None)
    job = job or next((j for j in jobs if j.request.call == call), None)
    if job is None:
        return f"no measure_* call {call or 'there'} in this version of {document.path}"
    targets, problems = parse_targets(dict(state.config.targets))
    if problems:
        return "; ".join(problems)
    name = str(wanted.get("target") or "")
    if not name and job.request.device:
        name = next((n for n, t in sorted(targets.items()) if t.chip == job.request.device), "local")
    target = find_target(targets, name or "local")
    if target is None:
        return f"unknown target '{name}'; known: {', '.join(sorted(targets))} ([tool.margin.targets])"
    if target.transport == "ray":  # Ray's client would run inside the language server: the command line runs it
        return f"target '{name}' is a Ray cluster, measured from a terminal: margin measure --on {name}"
    todo, skipped = plan([job], target, cache, state.config.trust, force=True)
    if not todo:
        return skipped[0].split(": skipped: ", 1)[-1] if skipped else "nothing to measure"
    return todo[0], target


async def _begin_progress(ls: MarginServer, run: Run, job: Job) -> str | None:
    """``$/progress`` begin for ``run`` when the client can show it; cancelling it cancels the run."""
    window = ls.client_capabilities.window
    if window is None or not window.work_done_progress:
        return None
    token = f"margin-measure-{next(_tokens)}"
    try:
        await ls.work_done_progress.create_async(token)
    except Exception:  # noqa: BLE001 - progress is optional; the measurement still runs
        return None
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
        f"Margin: measuring {job.request.call}", cancellable=True, message=f"on {run.target}"))  # fmt: skip
    future = ls.work_done_progress.tokens.get(token)
    if future is not None:
        future.add_done_callback(lambda done: run.cancel() if done.cancelled() else None)
    return token


def _cancellable_gang(target: Any, run: Run) -> Gang:
    """A gang that will not start (or restart) its workers once ``run`` is cancelled."""
    from server.worker.client import WorkerFailure
    from server.worker.gang import Gang

    class CancellableGang(Gang):
        def start(self) -> list[dict[str, Any]]:
            if run.cancelled:
                raise WorkerFailure("the measurement was cancelled")
            ready = super().start()
            if run.cancelled:  # cancelled while the workers started: they were not there to be killed
                self.stop()
                raise WorkerFailure("the measurement was cancelled")
            return ready

    return CancellableGang(target)


def _work(
    ls: MarginServer, loop: asyncio.AbstractEventLoop, run: Run, job: Job, target: Any, method: dict[str, Any]
) -> None:
    """The measuring thread: one job on a fresh gang, its result saved; the end is told on the event loop."""
    from server.measure_jobs import failure_text, measure_one
    from server.measurements import MeasurementCache

    outcome, failed = "", False
    run.gang = gang = _cancellable_gang(target, run)
    try:
        if run.token is not None:
            loop.call_soon_threadsafe(_report, ls, run.token, f"starting the workers on {target.name}")
        gang.start()
        if run.token is not None:
            loop.call_soon_threadsafe(_report, ls, run.token, f"measuring on {target.name}")
        device, done = measure_one(gang, job, MeasurementCache(ls.state.measurements.cache.root), method, None)
        outcome = (
            f"median {done.result.get('median_s', 0.0) * 1e3:.4g} ms on {device}, CV {done.result.get('cv', 0.0):.2f}"
        )
    except Exception as error:  # noqa: BLE001 - any failure is told to the user, never raised in a thread
        failed = True
        outcome = "cancelled" if run.cancelled else failure_text(error)
    finally:
        gang.close()
    loop.call_soon_threadsafe(_finish, ls, run, outcome, failed)


def _report(ls: MarginServer, token: str, message: str) -> None:
    ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))


def _finish(ls: MarginServer, run: Run, outcome: str, failed: bool) -> None:
    """On the event loop: end the progress, say what failed, re-check the drafts that measure."""
    RUNNING.pop((run.uri, run.call), None)
    if run.token is not None:
        ls.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=outcome))
    if failed and not run.cancelled:
        ls.window_show_message(types.ShowMessageParams(
            types.MessageType.Warning, f"Margin: {run.call} not measured on {run.target}: {outcome}"))  # fmt: skip
    run.done.set()
    if not failed:
        ls.state.measurements_changed()
    ls.refresh_code_lenses()
