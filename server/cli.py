"""The ``margin`` command line: check, coverage, eval (and its REPL), render, hardware, measure, worker, lsp.

Exit codes: 0 when everything passes, 1 when any check fails or any error is
reported, 2 for usage errors (bad options, missing paths, bad configuration)
and for internal errors (a bug in Margin: one line on stderr says where the
traceback was saved; ``--debug`` prints it).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import TYPE_CHECKING

import scaling_core
from scaling_core.hardware.records import hardware_records
from scaling_core.render import render_diagnostic
from scaling_core.text import LineIndex
from scaling_core.units.display import format_quantity
from server import reports
from server.check_command import add_check_parser, run_check
from server.coverage_command import add_coverage_parser, run_coverage
from server.crash import report_internal_error
from server.escaping import printable
from server.lsp.command import add_lsp_parser, run_lsp
from server.measure_command import add_measure_parser, run_measure
from server.render_command import add_render_parser, run_render
from server.workspace import UsageError, find_project

if TYPE_CHECKING:
    from scaling_core.document.session import Evaluation


def compiled_engine() -> bool:
    """Whether this install's engine was compiled with mypyc (docs/cli.md, "A compiled engine")."""
    from scaling_core.expr import evaluator  # a compiled engine compiles it (build_support/compiled-modules.txt)

    return (evaluator.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))


def version_line() -> str:
    """What ``margin --version`` prints: the version, and whether the engine is compiled."""
    return f"margin {scaling_core.__version__}" + (" (compiled engine)" if compiled_engine() else "")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="margin", description="Unit tests for technical writing.")
    parser.add_argument("--version", action="version", version=version_line())
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", required=True)

    add_check_parser(commands, common)
    add_coverage_parser(commands, common)

    evaluate = commands.add_parser("eval", parents=[common], help="evaluate an expression; a REPL without one")
    evaluate.add_argument("expression", nargs="?", help="e.g. '1.7e7 byte / (9e10 byte/s)'")
    evaluate.add_argument("--format", choices=("text", "json"), default="text")
    evaluate.add_argument("--explain", action="store_true", help="print the derivation: formulas, inputs, sources")
    evaluate.add_argument("--config", type=Path)

    add_render_parser(commands, common)

    add_lsp_parser(commands, common)

    hardware = commands.add_parser("hardware", parents=[common], help="print the hardware catalog with sources")
    hardware.add_argument("chip", nargs="?")
    hardware.add_argument("--config", type=Path)

    add_measure_parser(commands, common)
    # Listed for --help only: main() hands `margin worker ...` to the worker, which parses its own options.
    commands.add_parser("worker", help="serve measurements as JSON lines on stdio (margin measure starts it)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not valid UTF-8 (surrogate escapes) is shown escaped, never a crash.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["worker"]:  # the worker parses its own options (argparse would take them for margin's)
        return run_worker(argparse.Namespace(worker_args=given[1:]))
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0) and 2
    try:
        handlers = {
            "check": run_check,
            "coverage": run_coverage,
            "eval": run_eval,
            "render": run_render,
            "hardware": run_hardware,
            "lsp": run_lsp,
            "measure": run_measure,
            "worker": run_worker,
        }
        handler = handlers[args.command]
        return handler(args)
    except UsageError as error:
        print(f"margin: {printable(str(error))}", file=sys.stderr)  # a file name may hold escapes
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # noqa: BLE001 - every other exception is a bug in Margin
        return report_internal_error(error, debug=args.debug)


def _evaluation_json(evaluation: Evaluation) -> dict[str, object]:
    value = evaluation.value
    magnitude, unit = reports.si_value(value.quantity if value else None)
    index = LineIndex(evaluation.text)
    return {
        "version": reports.SCHEMA_VERSION,
        "value": magnitude,
        "unit": unit,
        "display": value.display if value else None,
        "checks": [{"status": c.status, "message": c.message} for c in evaluation.checks],
        "diagnostics": [
            {"code": d.code, "severity": d.severity.label, "message": d.message,
             "column": index.position(d.span.start)[1] + 1, "end_column": index.position(d.span.end)[1] + 1}
            for d in evaluation.diagnostics
        ],
    }  # fmt: skip


def _print_evaluation(evaluation: Evaluation) -> None:
    index = LineIndex(evaluation.text)
    for diagnostic in evaluation.diagnostics:
        print(render_diagnostic("<eval>", index, diagnostic), file=sys.stderr)
    for check in evaluation.checks:
        print(f"{'✓' if check.status == 'pass' else '✗'} {check.message}")
    if evaluation.value is not None:
        print(evaluation.value.display)


def _failed(evaluation: Evaluation) -> bool:
    errors = any(d.severity.label == "error" for d in evaluation.diagnostics)
    return errors or any(c.status == "fail" for c in evaluation.checks)


def run_eval(args: argparse.Namespace) -> int:
    """``margin eval EXPR``, or the REPL when no expression is given."""
    from scaling_core.document.session import CalcSession  # only `margin eval` keeps a session

    project = find_project(Path.cwd(), args.config)
    session = CalcSession(project.config)
    if args.expression is not None and args.explain:
        explanation = session.explain(args.expression)
        if explanation.markdown:
            print(explanation.markdown, end="")
        else:
            _print_evaluation(explanation.evaluation)
        return 1 if _failed(explanation.evaluation) else 0
    if args.expression is not None:
        evaluation = session.run(args.expression)
        if args.format == "json":
            print(json.dumps(_evaluation_json(evaluation), ensure_ascii=False))
        else:
            _print_evaluation(evaluation)
        return 1 if _failed(evaluation) else 0
    interactive = sys.stdin.isatty()
    if interactive:
        print("margin calculator: calc statements, one per line; Ctrl-D to quit")
    while True:
        if interactive:
            print("margin> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line or line.strip() in ("quit", "exit"):
            return 0
        if line.strip():
            _print_evaluation(session.run(line.rstrip("\r\n")))
            sys.stdout.flush()


def run_hardware(args: argparse.Namespace) -> int:
    """``margin hardware [CHIP]``: fields, values and sources, each note on the line under its value."""
    project = find_project(Path.cwd(), args.config)
    records = hardware_records(project.config)
    if args.chip and args.chip not in records:
        raise UsageError(f"unknown chip '{args.chip}'; known: {', '.join(sorted(records))}")

    for name in [args.chip] if args.chip else sorted(records):
        record = records[name]
        print(f"{name}: {record.title}")
        for field, value in record.fields.items():
            shown = record.texts.get(field) or format_quantity(value, 4)
            print(f"  {field:<19} {shown:<15} {record.sources.get(field, '')}")
            if field in record.notes:
                print(f"  {'':<19} note: {record.notes[field]}")
        print()
    return 0


def run_worker(args: argparse.Namespace) -> int:
    """``margin worker``: the measurement worker (JAX is imported there, never by the other commands)."""
    from server.worker.main import main as worker_main

    return worker_main(list(args.worker_args))
