"""The human-readable report of ``margin check``: diagnostics, summary, statistics."""

from __future__ import annotations

from collections import Counter

from scaling_core import CODES, Diagnostic, DocumentAnalysis, Severity
from scaling_core.render import location, render_diagnostic
from server.escaping import printable
from server.reports import Summary, summarize
from server.terminal import colorize_diagnostic, colorize_summary


def _listed(analysis: DocumentAnalysis, show_hints: bool) -> list[Diagnostic]:
    return [d for d in analysis.diagnostics if show_hints or d.severity <= Severity.WARNING]


def summary_line(summary: Summary) -> str:
    """One line of totals: files, checks, problems, errors and warnings."""
    s = summary
    return (
        f"{_count(s.files, 'file')}: checks {s.checks['pass']} passed, {s.checks['fail']} failed, "
        f"{s.checks['warn']} warned, {s.checks['skip']} skipped; problems {s.problems['pass']} passed, "
        f"{s.problems['fail']} failed, {s.problems['untested']} untested; "
        f"{_count(s.errors, 'error')}, {_count(s.warnings, 'warning')}"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def to_text(
    analyses: list[DocumentAnalysis], paths: list[str], *, show_hints: bool, color: bool = False, quiet: bool = False
) -> str:
    """Compiler-style diagnostics, then (unless ``quiet``) the summary line."""
    blocks = []
    for analysis, path in zip(analyses, paths):
        for diagnostic in _listed(analysis, show_hints):
            # File names and echoed source lines may hold terminal escapes: shown, never obeyed.
            block = printable(render_diagnostic(path, analysis.index, diagnostic))
            blocks.append(colorize_diagnostic(block) if color else block)
    if show_hints:  # -v: every skipped check, with why (a skip is never silent)
        skips = [
            f"{path}:{line}:{column}: skipped: {check.message}"
            for analysis, path in zip(analyses, paths)
            for check in analysis.checks if check.status == "skip"
            for line, column, _, _ in [location(analysis.index, check.span)]
        ]  # fmt: skip
        if skips:
            blocks.append(printable("\n".join(skips)))
    if not quiet:
        summary = summarize(analyses)
        line = summary_line(summary)
        blocks.append(colorize_summary(line, failed=summary.failed) if color else line)
    return "\n\n".join(blocks)


def to_statistics(analyses: list[DocumentAnalysis], *, show_hints: bool) -> str:
    """Counts per diagnostic code, most frequent first (``--statistics``).

    Each row is ``count  code  [*] title``; ``[*]`` marks codes whose
    diagnostics carry a quick fix (``--fix`` may repair them).
    """
    counts: Counter[str] = Counter()
    fixable: set[str] = set()
    for analysis in analyses:
        for diagnostic in _listed(analysis, show_hints):
            counts[diagnostic.code] += 1
            if diagnostic.fixes:
                fixable.add(diagnostic.code)
    if not counts:
        return ""
    width = len(str(max(counts.values())))
    rows = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        title = CODES[code].title if code in CODES else ""
        marker = "[*] " if code in fixable else "    "
        rows.append(f"{count:>{width}}\t{code}\t{marker}{title}")
    return "\n".join(rows)
