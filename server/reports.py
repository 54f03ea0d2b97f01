"""Output formats of ``margin check``: text, json, github, sarif, junit.

The JSON schema is versioned (``"version": 1``) and documented in
``docs/cli.md`` ("JSON schema (version 1)"); lines and columns are 1-based code points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import scaling_core
from scaling_core import Diagnostic, DocumentAnalysis, Quantity, Severity
from scaling_core.render import location
from scaling_core.units.arrays import is_array
from scaling_core.units.dimension import base_unit_name
from server.escaping import json_text, printable

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Summary:
    """Counts over every checked file."""

    files: int
    checks: dict[str, int]
    problems: dict[str, int]
    errors: int
    warnings: int

    @property
    def failed(self) -> bool:
        """Whether ``margin check`` exits 1."""
        return self.errors > 0


def summarize(analyses: list[DocumentAnalysis]) -> Summary:
    """Count checks, problems and diagnostics."""
    checks = dict.fromkeys(("pass", "fail", "warn", "skip"), 0)
    problems = dict.fromkeys(("pass", "fail", "untested"), 0)
    errors = warnings = 0
    for analysis in analyses:
        for check in analysis.checks:
            checks[check.status] += 1
        for problem in analysis.problems:
            problems[problem.status] += 1
        errors += sum(d.severity is Severity.ERROR for d in analysis.diagnostics)
        warnings += sum(d.severity is Severity.WARNING for d in analysis.diagnostics)
    return Summary(len(analyses), checks, problems, errors, warnings)


def si_value(quantity: Quantity | None) -> tuple[object, str]:
    """A quantity as JSON: its SI magnitude (number or list) and SI unit name."""
    if quantity is None:
        return None, ""
    value = quantity.value
    magnitude = [float(v) for v in value] if is_array(value) else float(value)
    return magnitude, base_unit_name(quantity.dim)


def _diagnostic_json(path: str, analysis: DocumentAnalysis, d: Diagnostic) -> dict[str, Any]:
    line, column, end_line, end_column = location(analysis.index, d.span)
    return {
        "path": path, "line": line, "column": column, "end_line": end_line, "end_column": end_column,
        "severity": d.severity.label, "code": d.code, "message": d.message, "notes": list(d.notes),
        "related": [dict(zip(("line", "column", "end_line", "end_column"), location(analysis.index, r.span)), message=r.message) for r in d.related],
        "fixes": [dict(zip(("line", "column", "end_line", "end_column"), location(analysis.index, f.span)), title=f.title, text=f.text) for f in d.fixes],
    }  # fmt: skip


def report_records(analyses: list[DocumentAnalysis], paths: list[str]) -> dict[str, Any]:
    """The JSON report (schema version 1) as Python data: the public API returns this too."""
    diagnostics, checks, problems = [], [], []
    for analysis, path in zip(analyses, paths):
        diagnostics += [_diagnostic_json(path, analysis, d) for d in analysis.diagnostics]
        for check in analysis.checks:
            value, unit = si_value(check.computed)
            line, column, _, _ = location(analysis.index, check.span)
            checks.append({
                "path": path, "line": line, "column": column, "kind": check.kind, "status": check.status,
                "op": check.op, "claim": check.claim, "value": value, "unit": unit,
                "display": check.computed_display, "problem": check.problem, "message": check.message,
            })  # fmt: skip
        for problem in analysis.problems:
            problems.append({
                "path": path, "id": problem.ident, "title": problem.title, "line": analysis.line(problem.span.start),
                "status": problem.status, "checks": {"passed": problem.passed, "failed": problem.failed, "total": problem.total},
            })  # fmt: skip
    summary = summarize(analyses)
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "margin", "version": scaling_core.__version__},
        "files": paths,
        "diagnostics": diagnostics,
        "checks": checks,
        "problems": problems,
        "summary": {"files": summary.files, "checks": summary.checks, "problems": summary.problems,
                    "errors": summary.errors, "warnings": summary.warnings},
    }  # fmt: skip


def to_json(analyses: list[DocumentAnalysis], paths: list[str]) -> str:
    """The stable JSON report (schema version 1)."""
    return json_text(report_records(analyses, paths))


def _escape_github(text: str, *, property_value: bool = False) -> str:
    """Escape workflow-command data (``%``, CR, LF), and in a property value also ``:`` and ``,``."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


_GITHUB_LEVEL = {
    Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice", Severity.HINT: "notice",
}  # fmt: skip


def _github_message(path: str, analysis: DocumentAnalysis, d: Diagnostic) -> str:
    """The annotation's text: the message, its notes, related locations and fixes, one per line."""
    lines = [d.message, *(f"note: {note}" for note in d.notes)]
    for related in d.related:
        line, column, _, _ = location(analysis.index, related.span)
        lines.append(f"see {path}:{line}:{column}: {related.message}")
    lines += [f"fix: {fix.title}" for fix in d.fixes]
    return "\n".join(lines)


def to_github(analyses: list[DocumentAnalysis], paths: list[str]) -> str:
    """GitHub Actions workflow commands (annotations on the pull request); hints are left out."""
    out = []
    for analysis, path in zip(analyses, paths):
        for d in analysis.diagnostics:
            if d.severity is Severity.HINT:
                continue
            line, column, end_line, end_column = location(analysis.index, d.span)
            props = (f"file={printable(_escape_github(path, property_value=True))},line={line},col={column},"
                     f"endLine={end_line},endColumn={end_column},"
                     f"title={_escape_github('Margin ' + d.code, property_value=True)}")  # fmt: skip
            message = printable(_escape_github(_github_message(path, analysis, d)))  # CR, LF: %0D, %0A
            out.append(f"::{_GITHUB_LEVEL[d.severity]} {props}::{message}")
    s = summarize(analyses)
    out.append(f"margin: {s.checks['pass']} checks passed, {s.checks['fail']} failed; {s.errors} errors")
    return "\n".join(out)


def to_sarif(analyses: list[DocumentAnalysis], paths: list[str], *, root: str | None = None) -> str:
    """SARIF 2.1.0 for code-scanning dashboards (:mod:`server.sarif`); ``root``: the current folder by default."""
    from server.sarif import to_sarif as sarif  # hashlib and friends: off the start-up path

    return sarif(analyses, paths, root=root)


def to_junit(analyses: list[DocumentAnalysis], paths: list[str], *, times: list[float] | None = None) -> str:
    """JUnit XML (see :mod:`server.junit`); ``times`` are each file's seconds of analysis (default 0)."""
    from server.junit import to_junit as junit  # xml.sax.saxutils imports urllib/http: off the start-up path

    return junit(analyses, paths, times=times)
