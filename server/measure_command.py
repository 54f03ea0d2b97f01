"""``margin measure [paths] --on TARGET``: run the drafts' ``measure_*`` calls on a target, fill the cache.

The drafts are analysed as ``margin check`` does, with a measurement source
that records every request the ``measure_*`` calls make.  Each request the
cache does not have (or has for an older version of the call; every one with
``--force``) runs on the target's gang of workers; each result is written to
``.margin/measurements.json`` as soon as it arrives (atomically), so an
interrupted run keeps what it measured.

Which requests a target measures: a call naming a chip (``measure_matmul(...,
h100)``) only on a target whose ``chip`` is that chip; a call naming none on
any target, stored under the target's chip or the device kind JAX reports.
``measure(f, ...)`` runs the draft's python calc blocks on the target, so it
needs a trusted workspace.

Exit codes: 0 when everything asked for was measured, 1 when a measurement
failed (one line each, saying why), 2 for usage errors (an unknown target, a
bad ``[tool.margin.targets]`` table).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scaling_core import analyze_document
from scaling_core.document.analysis import ImportContext
from scaling_core.external import Answer, CellReport, Outcome, Program, ProgramReport, Question
from scaling_core.measured import Measurement, MeasureRequest
from scaling_core.text import LineIndex
from server.measurements import MeasurementCache
from server.workspace import Project, UsageError, discover, display_path, find_project, make_loader, read_text

if TYPE_CHECKING:
    from server.worker.transports import Target


def add_measure_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Register ``margin measure`` and its options."""
    measure = commands.add_parser(
        "measure", parents=[common], help="run the drafts' measure_* calls on a target; fill the measurement cache",
        description="Time the kernels the drafts' measure_* calls name, on a target of [tool.margin.targets] "
        "('local' is this machine), and write .margin/measurements.json. Exit 0: all measured; 1: a measurement "
        "failed; 2: usage error.",
    )  # fmt: skip
    measure.add_argument("paths", nargs="*", default=["."], help="files or folders (default: the current folder)")
    measure.add_argument("--on", default="local", metavar="TARGET", help="where to measure (default: local)")
    measure.add_argument("--config", type=Path, help="margin.toml or pyproject.toml to use")
    measure.add_argument("--chip", help="the catalog chip the target's devices are (overrides its 'chip' setting)")
    measure.add_argument("--force", action="store_true", help="measure again what the cache already has")
    measure.add_argument("--dry-run", action="store_true", help="list what would be measured; run nothing")
    measure.add_argument("--samples", type=int, default=20, help="at least this many samples (default 20)")
    measure.add_argument("--min-seconds", type=float, default=0.5, help="and at least this long (default 0.5 s)")
    measure.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    measure.add_argument("--deadline", type=float, help="seconds one measurement may take (default: the target's)")
    measure.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")


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


def collect(args: argparse.Namespace, project: Project, cache: MeasurementCache) -> tuple[list[Job], bool]:
    """Every ``measure_*`` request of the drafts (one job per request and device); whether the workspace is trusted."""
    files = discover([Path(p) for p in args.paths], project)
    if not files:
        raise UsageError("no Markdown files to measure")
    collector, recorder = Collector(cache), ProgramRecorder()
    trusted = project.config.trust
    context = ImportContext(make_loader(project), trusted=recorder if trusted else None, measurements=collector)
    jobs: dict[tuple[str, str], Job] = {}
    for file in files:
        path = display_path(file)
        text = read_text(file)
        before = len(collector.seen)
        analyze_document(text, path, project.config, context=context)
        index = LineIndex(text)
        for request, _found in collector.seen[before:]:
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
    return list(jobs.values()), trusted


def run_measure(args: argparse.Namespace) -> int:
    """``margin measure``: returns the exit code."""
    from server.worker.transports import parse_targets  # only for this command: keeps the CLI's start-up light

    project = find_project(Path(args.paths[0]) if Path(args.paths[0]).exists() else Path.cwd(), args.config)
    targets, problems = parse_targets(dict(project.config.targets))
    if problems:
        raise UsageError("\n".join(problems))
    if args.on not in targets:
        raise UsageError(f"unknown target '{args.on}'; known: {', '.join(sorted(targets))} ([tool.margin.targets])")
    if args.samples < 2 or args.min_seconds < 0 or args.warmup < 0:
        raise UsageError("--samples must be at least 2, --min-seconds and --warmup at least 0")
    target = targets[args.on]
    if args.chip:
        target = dataclasses.replace(target, chip=args.chip)
    cache = MeasurementCache(project.root)
    jobs, trusted = collect(args, project, cache)
    todo, skipped = plan(jobs, target, cache, trusted, force=args.force)
    for line in skipped:
        print(line, file=sys.stderr)
    if args.dry_run:
        for job in todo:
            print(f"{job.where}: {job.request.call} would be measured on {target.name}")
        return 0
    method = {"min_samples": args.samples, "min_seconds": args.min_seconds, "warmup": args.warmup}
    failed = measure_jobs(todo, target, cache, method, args)
    if not args.quiet:
        done = len(todo) - failed
        print(f"measured {done} of {len(todo)} on {target.name}; {len(jobs) - len(todo)} not needed or skipped; "
              f"cache: {display_path(cache.path)}", file=sys.stderr)  # fmt: skip
    return 1 if failed else 0


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


def measure_jobs(todo: list[Job], target: Target, cache: MeasurementCache, method: dict[str, Any], args: Any) -> int:
    """Run the jobs on one gang, saving each result; returns how many failed."""
    if not todo:
        return 0
    from tqdm import tqdm  # only when something is measured: keeps start-up light

    from server.worker.client import MeasureError
    from server.worker.gang import Gang, GangFailure

    gang = Gang(target)
    failed = 0
    bar = tqdm(todo, desc=f"margin measure on {target.name}", unit="kernel", file=sys.stderr,
               disable=True if args.quiet else None, leave=False)  # fmt: skip
    try:
        for job in bar:
            spec: dict[str, Any] = {**job.request.spec, "method": method}
            if job.cells is not None:
                spec["cells"] = list(job.cells)
            try:
                done = gang.measure(spec, args.deadline)
            except (GangFailure, MeasureError) as error:
                failed += 1
                kind = f"{error.kind}: " if isinstance(error, MeasureError) and error.kind not in str(error) else ""
                tqdm.write(f"{job.where}: {job.request.call} not measured on {target.name}: {kind}{error}",
                           file=sys.stdout)  # fmt: skip
                continue
            device = target.chip or str(done.provenance.get("device_kind", "unknown"))
            provenance = {**done.provenance, "method": method}
            cache.record(job.request, device, done.result, provenance)
            cache.save()
            if not args.quiet:
                median = done.result.get("median_s", 0.0)
                tqdm.write(
                    f"{job.where}: {job.request.call} on {device}: median {median * 1e3:.4g} ms, "
                    f"CV {done.result.get('cv', 0.0):.2f}, {done.result.get('n')} samples",
                    file=sys.stdout,
                )
    finally:
        gang.close()
    return failed
