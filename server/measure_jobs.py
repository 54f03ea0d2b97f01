"""The measurement jobs of drafts, and running one: shared by ``margin measure`` and the editor's code lens.

:func:`jobs_of_text` analyses a draft with a measurement source that records
every request its ``measure_*`` calls make (:class:`Collector`) and trusted
code that runs nothing but keeps its python calc blocks
(:class:`ProgramRecorder`, for ``measure(f, ...)``); :func:`plan` says which
jobs a target measures; :func:`measure_one` runs one on a gang of workers
and writes its result to the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scaling_core import Config, analyze_document
from scaling_core.document.analysis import ImportContext
from scaling_core.external import Answer, CellReport, Outcome, Program, ProgramReport, Question
from scaling_core.measured import Measurement, MeasureRequest
from scaling_core.text import LineIndex
from server.measurements import MeasurementCache

if TYPE_CHECKING:
    from server.worker.gang import Gang
    from server.worker.transports import Target


@dataclass
class Job:
    """One request to measure, and where the drafts ask for it."""

    request: MeasureRequest
    #: ``draft.md:LINE:COLUMN`` of the first call asking for it.
    where: str
    #: The draft's python calc blocks, for ``measure(f, ...)``.
    cells: tuple[str, ...] | None = None
    #: The other calls asking for the same request.
    also: list[str] = field(default_factory=list)


class Collector:
    """A measurement source that remembers every request while answering from the cache."""

    def __init__(self, cache: MeasurementCache) -> None:
        self.cache = cache
        self.seen: list[tuple[MeasureRequest, Measurement]] = []

    def lookup(self, request: MeasureRequest) -> Measurement:
        """Answer from the cache, and remember the request."""
        found = self.cache.lookup(request)
        self.seen.append((request, found))
        return found


class ProgramRecorder:
    """Trusted code that runs nothing: it keeps each draft's python calc blocks for ``measure(f, ...)``."""

    def __init__(self) -> None:
        self.programs: dict[str, Program] = {}

    def load(self, program: Program) -> ProgramReport:
        """Remember the program; report its cells as not run here (they run on the target)."""
        self.programs[program.digest] = program
        return ProgramReport(tuple(CellReport(Outcome.NOT_RUN, "run on the target") for _ in program.cells))

    def ask(self, question: Question) -> Answer:
        """Nothing is answered here."""
        return Answer(failure=(Outcome.NOT_RUN, "margin measure does not analyse with JAX"))


def jobs_of_text(
    text: str, path: str, config: Config, loader: Any, cache: MeasurementCache, jobs: dict[tuple[str, str], Job]
) -> dict[tuple[str, str], Job]:
    """Add the ``measure_*`` requests of one draft to ``jobs`` (one per request and device); returns ``jobs``.

    ``margin measure`` calls it per file; the editor's "Run measurement" for the draft it is asked about.
    """
    collector, recorder = Collector(cache), ProgramRecorder()
    context = ImportContext(loader, trusted=recorder if config.trust else None, measurements=collector)
    analyze_document(text, path, config, context=context)
    index = LineIndex(text)
    for request, _found in collector.seen:
        line, column = index.position(request.span.start)
        where = f"{request.path}:{line + 1}:{column + 1}"
        key = (request.key, request.device)
        if key in jobs:
            jobs[key].also.append(where)
            continue
        cells = None
        if request.spec.get("op") == "function":
            program = recorder.programs.get(str(request.spec.get("program")))
            cells = program.cells if program is not None else None
        jobs[key] = Job(request, where, cells)
    return jobs


def plan(
    jobs: list[Job], target: Target, cache: MeasurementCache, trusted: bool, *, force: bool
) -> tuple[list[Job], list[str]]:
    """The jobs this target measures, and one line for each it skips (other than those already measured)."""
    todo, skipped = [], []
    for job in jobs:
        request = job.request
        if request.device and request.device != target.chip:
            said = f"is {target.chip}" if target.chip else "names no chip (chip = ... in its table)"
            skipped.append(f"{job.where}: skipped: {request.call} is for {request.device}; target {target.name} {said}")
            continue
        if request.spec.get("op") == "function" and not trusted:
            skipped.append(f"{job.where}: skipped: {request.call} runs the draft's python calc blocks, and the "
                           "workspace is not trusted (trust = true under [tool.margin])")  # fmt: skip
            continue
        if request.spec.get("op") == "function" and job.cells is None:
            skipped.append(f"{job.where}: skipped: the python calc blocks of {request.call} were not found")
            continue
        measured = cache.has(request.key, request.device or target.chip)
        if measured and not force:
            continue
        todo.append(job)
    return todo, skipped


def measure_one(gang: Gang, job: Job, cache: MeasurementCache, method: dict[str, Any], deadline: float | None) -> Any:
    """Run one job on ``gang`` and save its result in the cache; returns (device, the gang's result).

    Raises ``GangFailure`` or ``MeasureError`` when it fails (nothing is written then).
    """
    spec: dict[str, Any] = {**job.request.spec, "method": method}
    if job.cells is not None:
        spec["cells"] = list(job.cells)
    done = gang.measure(spec, deadline)
    device = gang.target.chip or str(done.provenance.get("device_kind", "unknown"))
    cache.record(job.request, device, done.result, {**done.provenance, "method": method})
    cache.save()
    return device, done


def failure_text(error: Exception) -> str:
    """Why a measurement failed, in one line (the worker's error kind first when the message lacks it)."""
    kind = getattr(error, "kind", "")
    return f"{kind}: {error}" if kind and kind not in str(error) else str(error)
