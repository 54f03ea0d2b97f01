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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.measure_jobs import Job, failure_text, jobs_of_text, measure_one, plan
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


def collect(args: argparse.Namespace, project: Project, cache: MeasurementCache) -> tuple[list[Job], bool]:
    """Every ``measure_*`` request of the drafts (one job per request and device); whether the workspace is trusted."""
    files = discover([Path(p) for p in args.paths], project)
    if not files:
        raise UsageError("no Markdown files to measure")
    trusted = project.config.trust
    jobs: dict[tuple[str, str], Job] = {}
    loader = make_loader(project)
    for file in files:
        jobs_of_text(read_text(file), display_path(file), project.config, loader, cache, jobs)
    return list(jobs.values()), trusted


def run_measure(args: argparse.Namespace) -> int:
    """``margin measure``: returns the exit code."""
    from server.worker.transports import find_target, parse_targets  # only here: keeps the CLI's start-up light

    project = find_project(Path(args.paths[0]) if Path(args.paths[0]).exists() else Path.cwd(), args.config)
    targets, problems = parse_targets(dict(project.config.targets))
    if problems:
        raise UsageError("\n".join(problems))
    found = find_target(targets, args.on)  # a configured target, or ray:auto / ray://HEAD:PORT
    if found is None:
        raise UsageError(f"unknown target '{args.on}'; known: {', '.join(sorted(targets))} ([tool.margin.targets])")
    if args.samples < 2 or args.min_seconds < 0 or args.warmup < 0:
        raise UsageError("--samples must be at least 2, --min-seconds and --warmup at least 0")
    target = found
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
            try:
                device, done = measure_one(gang, job, cache, method, args.deadline)
            except (GangFailure, MeasureError) as error:
                failed += 1
                tqdm.write(f"{job.where}: {job.request.call} not measured on {target.name}: {failure_text(error)}",
                           file=sys.stdout)  # fmt: skip
                continue
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
