"""``margin coverage``: which concepts of the drafts no problem tests, in the style of coverage.py.

Exit status: 0, or 1 when ``--fail-under N`` is given and the total is
below N percent; 2 for usage errors.  Failing checks do not change the exit
status here (``margin check`` reports them); they are listed as concepts
"tested only by failing checks".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scaling_core import analyze_document
from scaling_core.document.analysis import ImportContext
from server.check_command import load_drafts, write_output
from server.collector import collector_held_for_analysis
from server.workspace import Project, UsageError, find_project, make_loader

FORMATS = ("text", "json", "markdown", "html")


def add_coverage_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Register ``margin coverage`` and its options."""
    coverage = commands.add_parser(
        "coverage", parents=[common], help="which concepts no problem tests (a table per file and section)",
        description="Report, per file and section, the concepts (definitions, chip fields and formulas used "
        "in prose, headings) that the drafts' problems test. Exit 1 with --fail-under when the total is lower.",
    )  # fmt: skip
    coverage.add_argument("paths", nargs="*", default=["."], help="files, folders or globs")
    coverage.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    coverage.add_argument("--fail-under", type=float, metavar="N", help="exit 1 when the total is below N percent")
    coverage.add_argument("--files-only", action="store_true", help="text: one row per file, no sections")
    coverage.add_argument("-o", "--output-file", type=Path, help="write the report here (atomically)")
    coverage.add_argument("--config", type=Path, help="margin.toml or pyproject.toml to use")
    coverage.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                          help="also read files that .gitignore ignores")  # fmt: skip
    coverage.set_defaults(stdin_filename=None, force_exclude=False)


def _project(args: argparse.Namespace) -> Project:
    first = Path(args.paths[0])
    return find_project(first if first.exists() else Path.cwd(), args.config)


def run_coverage(args: argparse.Namespace) -> int:
    """``margin coverage [PATH…]``."""
    if "-" in args.paths:
        raise UsageError("margin coverage reads files, not standard input")
    if args.fail_under is not None and not 0 <= args.fail_under <= 100:
        raise UsageError("--fail-under takes a percentage from 0 to 100")
    # Here, not at the top: `margin check` imports this module for its options and needs none of these.
    from server.coverage_html import to_html
    from server.coverage_report import coverage_of, to_json, to_markdown, to_text, total_line

    project = _project(args)
    drafts = load_drafts(args, project)
    context = ImportContext(make_loader(project))
    with collector_held_for_analysis():  # as `margin check` holds it (server/check_command.py)
        analyses = [analyze_document(d.text, d.path, project.config, context=context) for d in drafts]
    report = coverage_of(analyses, context)
    if args.format == "json":
        output = to_json(report)
    elif args.format == "markdown":
        output = to_markdown(report)
    elif args.format == "html":
        output = to_html(report)
    else:
        output = to_text(report, show_sections=not args.files_only)
    below = args.fail_under is not None and report.percent < args.fail_under
    if args.output_file is not None:
        write_output(args.output_file, output if output.endswith("\n") else output + "\n")
        print(total_line(report), file=sys.stderr)
    else:
        print(output, end="" if output.endswith("\n") else "\n")
    if below:
        message = f"Coverage failure: total of {report.percent:.1f}% is less than --fail-under {args.fail_under:g}%"
        print(message, file=sys.stderr)
        return 1
    return 0
