"""``margin render --format json``: every value and verdict of a set of drafts, for publishing plugins.

The schema is versioned (``"version": 1``, ``"kind": "render"``) and
documented in docs/publishing.md.  Lines and columns are 1-based code points,
as in ``margin check --format json``; each file also gives its absolute path,
so a plugin that sees files by another name (a build folder, a link) can match
them.  The Sphinx extension, the mystmd plugin and the Pandoc filter all read
this one shape.
"""

from __future__ import annotations

import os
from typing import Any

import scaling_core
from scaling_core import DocumentAnalysis, Severity
from scaling_core.publish import CalcBlock, InlineRole, roles_and_blocks
from scaling_core.render import location
from server.reports import report_records, si_value

SCHEMA_VERSION = 1
#: Codes that are verdicts on an evaluated number, not a failure to evaluate one.
VERDICT_CODES = frozenset(("C001", "P001"))


def _span(analysis: DocumentAnalysis, start: int, end: int) -> dict[str, int]:
    line, column, end_line, end_column = location(analysis.index, scaling_core.Span(start, end))
    return {"line": line, "column": column, "end_line": end_line, "end_column": end_column}


def _role(analysis: DocumentAnalysis, role: InlineRole) -> dict[str, Any]:
    record: dict[str, Any] = {**_span(analysis, role.span.start, role.span.end), "expr": role.expr}
    if role.value is None:
        return {**record, "ok": False, "display": None, "value": None, "unit": "", "message": role.reason}
    value, unit = si_value(role.value.quantity)
    return {**record, "ok": True, "display": role.value.display, "value": value, "unit": unit, "message": None}


def _block(analysis: DocumentAnalysis, block: CalcBlock) -> dict[str, Any]:
    notes = [{"line": analysis.line(line.offset), "text": line.note} for line in block.lines if line.note is not None]
    return {
        **_span(analysis, block.span.start, block.span.end),
        "hidden": block.hidden,
        "source": block.source,
        "rendered": block.rendered,
        "annotations": notes,
    }


def failed_lines(
    analysis: DocumentAnalysis, roles: list[InlineRole] | None = None, *, strict: bool = False
) -> list[str]:
    """Why rendering the draft fails: each error that is not a verdict, each role without a value (and with
    ``strict``, each failing check and problem too).

    Compiler-style lines (``path:line:col: error CODE: message``), empty when everything was evaluated.
    """
    if roles is None:
        roles = roles_and_blocks(analysis)[0]
    found = []
    for diagnostic in analysis.diagnostics:
        if diagnostic.severity is Severity.ERROR and (strict or diagnostic.code not in VERDICT_CODES):
            line, column, _, _ = location(analysis.index, diagnostic.span)
            found.append((line, column, f"error {diagnostic.code}: {diagnostic.message}"))
    for role in roles:
        if role.value is None:
            line, column, _, _ = location(analysis.index, role.span)
            found.append((line, column, f"error: {{calc}}`{role.expr}` has no value: {role.reason}"))
    return [f"{analysis.path}:{line}:{column}: {message}" for line, column, message in sorted(set(found))]


def file_record(analysis: DocumentAnalysis, path: str, absolute: str) -> dict[str, Any]:
    """One file's roles, calc blocks, checks, problems and diagnostics."""
    report = report_records([analysis], [path])
    checks = []
    for record, check in zip(report["checks"], analysis.checks):
        checks.append({**record, **_span(analysis, check.span.start, check.span.end)})
    problems = []
    for record, problem in zip(report["problems"], analysis.problems):
        title = _span(analysis, problem.title_span.start, problem.title_span.end)
        problems.append({**record, "end_line": analysis.line(problem.span.end), "title_span": title})
    roles, blocks = roles_and_blocks(analysis)
    return {
        "path": path,
        "absolute": absolute,
        "roles": [_role(analysis, role) for role in roles],
        "blocks": [_block(analysis, block) for block in blocks],
        "checks": checks,
        "problems": problems,
        "diagnostics": report["diagnostics"],
        "unevaluated": failed_lines(analysis, roles),
    }


def publication_records(analyses: list[DocumentAnalysis], paths: list[str], absolutes: list[str]) -> dict[str, Any]:
    """The render JSON (schema version 1) as Python data: files keyed by their shown path, and a summary."""
    files = {path: file_record(a, path, os.path.abspath(f)) for a, path, f in zip(analyses, paths, absolutes)}
    summary = report_records(analyses, paths)["summary"]
    roles = [role for record in files.values() for role in record["roles"]]
    summary["roles"] = {"ok": sum(r["ok"] for r in roles), "failed": sum(not r["ok"] for r in roles)}
    summary["unevaluated"] = sum(len(record["unevaluated"]) for record in files.values())
    return {
        "version": SCHEMA_VERSION,
        "kind": "render",
        "tool": {"name": "margin", "version": scaling_core.__version__},
        "files": files,
        "summary": summary,
    }
