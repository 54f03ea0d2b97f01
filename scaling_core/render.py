"""Compiler-style text for diagnostics, shared by ``margin check`` and golden tests.

::

    drafts/train.md:12:24: error C001: check failed: computed 25.3 days, not ≈ 22 days
       |
    12 | Training takes about **22 days**<!-- ≈ t -->
       |                        ^^^^^^^
       = note: off by a factor of 2

Carets line up under wide characters (CJK, emoji) by display width.
"""

from __future__ import annotations

import unicodedata

from scaling_core.diagnostics import Diagnostic
from scaling_core.document.results import DocumentAnalysis
from scaling_core.text import LineIndex, Span


def display_width(text: str) -> int:
    """Terminal columns taken by ``text`` (wide and full-width characters count 2)."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def location(index: LineIndex, span: Span) -> tuple[int, int, int, int]:
    """1-based (line, column, end line, end column) of a span, in code points."""
    line, column = index.position(span.start)
    end_line, end_column = index.position(span.end)
    return line + 1, column + 1, end_line + 1, end_column + 1


def render_diagnostic(path: str, index: LineIndex, diagnostic: Diagnostic) -> str:
    """One diagnostic with its source line, carets, notes and related locations."""
    line, column, end_line, end_column = location(index, diagnostic.span)
    severity = diagnostic.severity.label
    head = f"{path}:{line}:{column}: {severity} {diagnostic.code}: {diagnostic.message}"
    source = index.line_text(line - 1).replace("\t", " ")
    last_column = end_column if end_line == line else len(source) + 1
    pad = " " * len(str(line))
    start_width = display_width(source[: column - 1])
    caret_width = max(display_width(source[column - 1 : last_column - 1]), 1)
    lines = [
        head,
        f"{pad} |",
        f"{line} | {source}",
        f"{pad} | {' ' * start_width}{'^' * caret_width}",
    ]
    lines.extend(f"{pad} = note: {note}" for note in diagnostic.notes)
    for related in diagnostic.related:
        r_line, r_column, _, _ = location(index, related.span)
        lines.append(f"{pad} = see {path}:{r_line}:{r_column}: {related.message}")
    for fix in diagnostic.fixes:
        lines.append(f"{pad} = fix: {fix.title}")
    return "\n".join(lines)


def render_analysis(analysis: DocumentAnalysis, path: str | None = None) -> str:
    """All diagnostics of one analysis, blank-line separated."""
    shown = path or analysis.path
    return "\n\n".join(render_diagnostic(shown, analysis.index, d) for d in analysis.diagnostics)


def render_values(analysis: DocumentAnalysis) -> str:
    """The computed values and check verdicts, one per line (golden ``ok`` files)."""
    rows = []
    for value in analysis.values:
        line = analysis.line(value.span.start)
        label = f"{value.name} = " if value.name else ("inline " if value.inline else "")
        rows.append((value.span.start, f"{line}: {label}{value.display}"))
    for check in analysis.checks:
        line = analysis.line(check.span.start)
        rows.append((check.span.start, f"{line}: {check.kind} {check.status}: {check.message}"))
    for problem in analysis.problems:
        line = analysis.line(problem.span.start)
        counts = f"{problem.passed}/{problem.total} checks pass"
        rows.append((problem.span.start, f"{line}: problem {problem.ident!r} {problem.status} ({counts})"))
    rows.sort(key=lambda row: row[0])
    return "\n".join(text for _, text in rows)
