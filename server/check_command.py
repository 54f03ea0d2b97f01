"""``margin check``: its options, and one run from files (or stdin) to a report and an exit code.

The options follow ruff, mypy and markdownlint-cli2 where they have an
equivalent (docs/cli.md has the table).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scaling_core import CODES, Config, DocumentAnalysis, analyze_document
from scaling_core.document.analysis import ImportContext
from server import reports
from server.collector import collector_held_for_analysis
from server.escaping import printable
from server.measurements import cache_for
from server.terminal import COLOR_CHOICES, use_color
from server.text_report import to_statistics, to_text
from server.workspace import (
    DraftDecodeError,
    DraftText,
    Project,
    Skipped,
    UsageError,
    decode_draft,
    discover,
    display_path,
    find_project,
    is_excluded,
    make_loader,
    read_draft,
    write_atomically,
)

if TYPE_CHECKING:
    from server.analysis.runner import AnalysisRunner

FORMATS = ("text", "json", "github", "sarif", "junit")
#: Above this many files, a terminal shows a progress bar on stderr.
PROGRESS_THRESHOLD = 200


def add_check_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Register ``margin check`` and its options."""
    check = commands.add_parser(
        "check", parents=[common], help="check drafts: calculations, units, claims, problems",
        description="Check Markdown drafts. Exit 0: nothing fails; 1: a check fails or an error is reported; "
        "2: usage error or internal error.",
    )  # fmt: skip
    check.add_argument("paths", nargs="*", default=["."], help="files, folders or globs; '-' reads standard input")
    check.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    check.add_argument("--config", type=Path, help="margin.toml or pyproject.toml to use")
    check.add_argument("-v", "--verbose", action="store_true", help="also show hints")
    check.add_argument("-q", "--quiet", action="store_true", help="print diagnostics only: no summary, no progress")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when checks fail")
    check.add_argument("-o", "--output-file", type=Path, help="write the report to this file instead of stdout")
    check.add_argument("--statistics", action="store_true", help="print counts per diagnostic code")
    check.add_argument("--select", action="append", default=[], metavar="CODES",
                       help="report only these codes or prefixes (comma-separated: C001,U)")  # fmt: skip
    check.add_argument("--ignore", action="append", default=[], metavar="CODES",
                       help="do not report these codes or prefixes (comma-separated)")  # fmt: skip
    check.add_argument("--color", choices=COLOR_CHOICES, default="auto", help="colour the text report")
    check.add_argument("--stdin-filename", metavar="PATH", help="the name of the draft read from '-'")
    check.add_argument("--fix", action="store_true", help="apply safe fixes (stale claimed numbers) in place")
    check.add_argument("--diff", action="store_true", help="print the changes --fix would make; write nothing")
    check.add_argument("--watch", action="store_true", help="check again whenever a draft or the config changes")
    check.add_argument("--coverage", action="store_true", help="also print the one-line total of margin coverage")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply the config's exclude to files named on the command line (pre-commit)")  # fmt: skip
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                       help="also check files that .gitignore ignores")  # fmt: skip


@dataclass
class Draft:
    """One draft to check: where it is shown, its text, and the file (None for stdin)."""

    path: str
    text: str
    file: Path | None
    #: How the text was read (its encoding, to write a fix back byte for byte); None: given as text.
    source: DraftText | None = None


def selected_config(config: Config, select: list[str], ignore: list[str]) -> Config:
    """``config`` with the codes outside ``--select`` or inside ``--ignore`` turned off."""
    chosen = _codes(select) if select else set(CODES)
    dropped = _codes(ignore)
    severity = dict(config.severity)
    for code in CODES:
        if code not in chosen or code in dropped:
            severity[code] = None
    return dataclasses.replace(config, severity=severity)


def _codes(options: list[str]) -> set[str]:
    found: set[str] = set()
    for option in options:
        for prefix in filter(None, (part.strip().upper() for part in option.split(","))):
            matching = {code for code in CODES if code.startswith(prefix)}
            if not matching:
                raise UsageError(f"'{prefix}' matches no diagnostic code (see docs/diagnostics.md)")
            found |= matching
    return found


def _project(args: argparse.Namespace) -> Project:
    if args.paths == ["-"]:
        start = Path(args.stdin_filename) if args.stdin_filename else Path.cwd()
        return find_project(start if start.exists() else Path.cwd(), args.config)
    first = Path(args.paths[0])
    return find_project(first if first.exists() else Path.cwd(), args.config)


def load_drafts(args: argparse.Namespace, project: Project, skipped: list[Skipped] | None = None) -> list[Draft]:
    """The drafts named by the arguments, read from disk or stdin.

    A path that cannot be read (a folder that cannot be listed, a file that
    cannot be opened or decoded) is not checked: a warning on stderr says so,
    and it is added to ``skipped``.  A draft read with replacement characters
    (not valid UTF-8) is checked, with a warning.
    """
    if "-" in args.paths:
        if args.paths != ["-"]:
            raise UsageError("'-' (standard input) cannot be combined with other paths")
        name = args.stdin_filename or "-"
        if args.stdin_filename and args.force_exclude and is_excluded(Path(name), project):
            return []
        shown = display_path(Path(name)) if args.stdin_filename else name
        source = _read_stdin(shown)
        return [Draft(shown, source.text, None, source)]
    if args.stdin_filename:
        raise UsageError("--stdin-filename needs '-' as the path")
    skipped = [] if skipped is None else skipped
    files = discover(
        [Path(p) for p in args.paths],
        project,
        respect_gitignore=args.respect_gitignore,
        force_exclude=args.force_exclude,
        skipped=skipped,
    )
    if not files and not skipped and not args.force_exclude:
        raise UsageError("no Markdown files to check")
    drafts = []
    for file in files:
        try:
            source = read_draft(file)
        except (OSError, DraftDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            skipped.append(Skipped(file, f"cannot read it: {reason}"))
            continue
        if source.warning is not None:
            _warn(f"{printable(display_path(file))}: {source.warning}")
        drafts.append(Draft(display_path(file), source.text, file, source))
    for skip in skipped:
        _warn(f"{printable(display_path(skip.path))}: skipped, {skip.reason}")
    return drafts


def _read_stdin(shown: str) -> DraftText:
    """Standard input as a draft: its bytes decoded like a file's (a byte order mark, UTF-16 …)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream (tests, embedding): already decoded
        return DraftText(sys.stdin.read().removeprefix("\ufeff"))
    try:
        source = decode_draft(buffer.read())
    except DraftDecodeError as error:
        raise UsageError(f"{printable(shown)}: cannot read standard input: {error}") from None
    if source.warning is not None:
        _warn(f"{printable(shown)}: {source.warning}")
    return source


def _warn(message: str) -> None:
    print(f"margin: warning: {message}", file=sys.stderr)


def _with_progress(drafts: list[Draft], args: argparse.Namespace) -> Iterable[Draft]:
    if len(drafts) <= PROGRESS_THRESHOLD or args.quiet or not sys.stderr.isatty():
        return drafts
    from tqdm import tqdm  # only when a bar is shown: keeps start-up light

    try:
        columns, rows = os.get_terminal_size(sys.stderr.fileno())
    except OSError:
        columns = rows = 0
    # A terminal that reports no size (0 × 0) would hide the bar: assume 80 × 24.
    bar: Iterable[Draft] = tqdm(
        drafts, desc="margin check", unit="file", file=sys.stderr, leave=False, ncols=columns or 80, nrows=rows or 24
    )
    return bar


def analyze_drafts(
    drafts: list[Draft],
    project: Project,
    config: Config,
    args: argparse.Namespace,
    context: ImportContext | None = None,
) -> Iterator[tuple[DocumentAnalysis, float]]:
    """Analyse each draft in order, with the seconds it took (a progress bar on big runs in a terminal).

    The cyclic collector is held during each analysis, as the language server
    holds it (:func:`server.collector.collector_held_for_analysis`): its passes
    over what an analysis keeps grow with the draft (measured, a 40 MB draft:
    18.4 s with them, 13.7 s held).
    """
    context = context or ImportContext(make_loader(project))
    for draft in _with_progress(drafts, args):
        started = time.perf_counter()
        with collector_held_for_analysis():
            analysis = analyze_document(draft.text, draft.path, config, context=context)
        yield analysis, time.perf_counter() - started


def write_output(path: Path, text: str | bytes) -> None:
    """Write a report or a fixed draft atomically; an unwritable place is a usage error (exit 2)."""
    try:
        write_atomically(path, text)
    except OSError as error:
        raise UsageError(f"{path}: cannot write: {error.strerror or error}") from None


def _apply_fixes(drafts: list[Draft], config: Config, project: Project, args: argparse.Namespace) -> int:
    """``--fix`` / ``--diff``: rewrite (or show) the drafts; returns 1 when ``--diff`` found changes."""
    from server.fixes import fix_text, unified_diff  # only with --fix/--diff: difflib off the start-up path

    context = ImportContext(make_loader(project))
    fixed = changed = 0
    diffs = []
    for draft in drafts:
        source = draft.source or DraftText(draft.text)
        if draft.file is not None and source.encode(draft.text) != draft.file.read_bytes():
            # Read with replacement characters: rewriting it would change bytes outside any fix.
            print(f"margin: {printable(draft.path)}: not valid UTF-8; not fixed", file=sys.stderr)
            continue
        outcome = fix_text(draft.text, draft.path, config, context)
        if outcome.text == draft.text:
            continue
        changed += 1
        fixed += len(outcome.applied)
        if args.diff:
            diffs.append(unified_diff(draft.path, draft.text, outcome.text))
        else:
            if draft.file is not None:
                write_output(draft.file, source.encode(outcome.text))  # in its own encoding, mark and all
            draft.text = outcome.text
    if args.diff:
        if diffs:
            sys.stdout.write("".join(diffs))
        if not args.quiet:
            print(
                f"Would fix {fixed} problem{'s' * (fixed != 1)} in {changed} file{'s' * (changed != 1)}",
                file=sys.stderr,
            )
        return 1 if diffs else 0
    if not args.quiet and (fixed or drafts and drafts[0].file is not None):
        print(f"Fixed {fixed} problem{'s' * (fixed != 1)} in {changed} file{'s' * (changed != 1)}", file=sys.stderr)
    return 0


def check_once(args: argparse.Namespace) -> int:
    """One run of ``margin check``: report and exit code."""
    project = _project(args)
    config = selected_config(project.config, args.select, args.ignore)
    skipped: list[Skipped] = []
    drafts = load_drafts(args, project, skipped)
    if skipped and not drafts:
        raise UsageError(f"nothing could be read: {_paths(len(skipped))} skipped (see the warnings above)")
    if args.diff:
        return max(_apply_fixes(drafts, config, project, args), _skip_status(skipped, args))
    from_stdin = bool(drafts) and drafts[0].file is None
    if args.fix:
        _apply_fixes(drafts, config, project, args)
        if from_stdin:  # like ruff: the fixed draft goes to stdout, the report to stderr
            _write_stdout(drafts[0])
    context = ImportContext(
        make_loader(project), trusted=_runner(project, config), measurements=cache_for(project.root)
    )
    timed = list(analyze_drafts(drafts, project, config, args, context))
    analyses, times = [analysis for analysis, _ in timed], [seconds for _, seconds in timed]
    paths = [draft.path for draft in drafts]
    destination = sys.stderr if args.fix and from_stdin else sys.stdout
    color = args.output_file is None and use_color(args.color, destination)
    output = render_report(analyses, paths, args, color=color, times=times)
    if args.output_file is not None:
        write_output(args.output_file, output + "\n" if output else "")
    elif output:
        print(output, file=destination)
    if getattr(args, "coverage", False):
        from server.coverage_report import coverage_of, total_line  # only with --coverage

        print(total_line(coverage_of(analyses, context)), file=destination)
    unread = _skip_status(skipped, args)
    if args.exit_zero:
        return 0
    return max(1 if reports.summarize(analyses).failed else 0, unread)


def _runner(project: Project, config: Config) -> AnalysisRunner | None:
    """The runner of trusted python blocks, only for a workspace whose settings trust it."""
    if not config.trust:
        return None
    from server.analysis.runner import runner_for  # processes and pipes: off the start-up path of most checks

    return runner_for(project.root, config)


def _paths(count: int) -> str:
    return f"{count} path{'s' * (count != 1)}"


def _skip_status(skipped: list[Skipped], args: argparse.Namespace) -> int:
    """Paths that could not be read fail the run (exit 1) like an error: a draft nobody checked never passes."""
    if not skipped:
        return 0
    if not args.quiet:
        print(f"margin: {_paths(len(skipped))} skipped, not checked (see the warnings above)", file=sys.stderr)
    return 0 if args.exit_zero else 1


def _write_stdout(draft: Draft) -> None:
    """A fixed draft from standard input, in the encoding it came in (byte order mark included)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None or draft.source is None:
        sys.stdout.write(draft.text)
        return
    sys.stdout.flush()
    buffer.write(draft.source.encode(draft.text))
    buffer.flush()


def render_report(
    analyses: list[DocumentAnalysis],
    paths: list[str],
    args: argparse.Namespace,
    *,
    color: bool,
    times: list[float] | None = None,
) -> str:
    """The report in the chosen format (``--statistics`` replaces the text listing)."""
    if args.format == "json":
        return reports.to_json(analyses, paths)
    if args.format == "github":
        return reports.to_github(analyses, paths)
    if args.format == "sarif":
        return reports.to_sarif(analyses, paths)
    if args.format == "junit":
        return reports.to_junit(analyses, paths, times=times)
    if args.statistics:
        return to_statistics(analyses, show_hints=args.verbose)
    return to_text(analyses, paths, show_hints=args.verbose, color=color, quiet=args.quiet)


def run_check(args: argparse.Namespace) -> int:
    """``margin check``: once, or again on every change with ``--watch``."""
    if args.fix and args.diff:
        raise UsageError("--fix and --diff cannot be combined (--diff previews what --fix would write)")
    if args.watch:
        if args.paths == ["-"]:
            raise UsageError("--watch cannot read standard input")
        from server.watch import watch  # only with --watch: watchfiles off the start-up path

        return watch(args, check_once)
    return check_once(args)
