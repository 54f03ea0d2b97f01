"""Formats of ``margin coverage``: text (a coverage.py-style table), JSON and Markdown.

The HTML report is in :mod:`server.coverage_html`.  Every format lists the
same rows: per file, per section, then a total; and the untested concepts
with their lines.
"""

from __future__ import annotations

from scaling_core import DocumentAnalysis, ImportContext
from scaling_core.document.results import ProblemStatus
from scaling_core.queries.coverage import workspace_coverage
from scaling_core.queries.coverage_model import (
    Concept,
    ConceptKind,
    ConceptStatus,
    CoverageReport,
    FileCoverage,
    SectionCoverage,
)
from server.escaping import json_text, printable
from server.reports import SCHEMA_VERSION

_HEADER = ("Name", "Concepts", "Covered", "Miss", "Cover", "Problems", "Checks", "Pass", "Fail", "Untested")


def coverage_of(analyses: list[DocumentAnalysis], context: ImportContext) -> CoverageReport:
    """Coverage of ``analyses``, with the files they import linking the graph (not reported themselves)."""
    reported = {a.path for a in analyses}
    return workspace_coverage(analyses, [a for a in context.cache.values() if a.path not in reported])


def shown(percent: float) -> str:
    """A percentage as shown (as coverage.py does): rounded, but never 100% unless all, never 0% unless none."""
    rounded = round(percent)
    if rounded == 100 and percent < 100:
        rounded = 99
    elif rounded == 0 and percent > 0:
        rounded = 1
    return f"{rounded}%"


def section_name(section: SectionCoverage) -> str:
    """A section as listed: its heading (``## Title``), or the text before the first heading."""
    return f"{'#' * section.level} {section.title}" if section.level else "(before the first heading)"


def concept_name(concept: Concept) -> str:
    """A concept as listed: ``flops``, ``h100.hbm_bw (chip field)``, ``## Problems (section)``."""
    return concept.name if concept.kind == ConceptKind.DEFINITION else f"{concept.name} ({concept.kind})"


def total_line(report: CoverageReport) -> str:
    """The one-line total (``margin check --coverage``)."""
    files = len(report.files)
    return (
        f"Coverage: {report.covered} of {report.total} concepts tested by problems ({shown(report.percent)}) "
        f"in {files} file{'s' * (files != 1)}"
    )


def _row(
    name: str, total: int, covered: int, percent: float, problems: list[ProblemStatus], checks: int
) -> tuple[str, ...]:
    counts = [sum(p == s for p in problems) for s in (ProblemStatus.PASS, ProblemStatus.FAIL, ProblemStatus.UNTESTED)]
    return (
        name,
        str(total),
        str(covered),
        str(total - covered),
        shown(percent),
        str(len(problems)),
        str(checks),
        *map(str, counts),
    )


def _rows(report: CoverageReport) -> list[tuple[tuple[str, ...], bool]]:
    """Table rows (cells, whether it is a file or total row)."""
    rows = []
    for file in report.files:
        statuses = [p.status for p in file.problems]
        rows.append(
            (
                _row(file.path, file.total, file.covered, file.percent, statuses, sum(p.total for p in file.problems)),
                True,
            )
        )
        for section in file.sections:
            statuses = [p.status for p in section.problems]
            rows.append(
                (
                    _row(
                        "  " + section_name(section),
                        section.total,
                        section.covered,
                        section.percent,
                        statuses,
                        section.checks,
                    ),
                    False,
                )
            )
    problems = [p.status for f in report.files for p in f.problems]
    checks = sum(p.total for f in report.files for p in f.problems)
    rows.append((_row("TOTAL", report.total, report.covered, report.percent, problems, checks), True))
    return rows


def _listed(report: CoverageReport, status: ConceptStatus) -> list[tuple[FileCoverage, Concept]]:
    return [(f, c) for f in report.files for c in f.concepts if c.status == status]


def to_text(report: CoverageReport, *, show_sections: bool = True) -> str:
    """The table, then the untested concepts and those tested only by failing checks."""
    rows = [cells for cells, main in _rows(report) if show_sections or main]
    widths = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(len(_HEADER))]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    rule = "-" * len(line(_HEADER))
    out = [line(_HEADER), rule, *map(line, rows[:-1]), rule, line(rows[-1])]
    untested = _listed(report, ConceptStatus.UNTESTED)
    if untested:
        out += ["", "Untested concepts (no problem tests them):"]
        out += [f"  {c.path}:{c.line}: {concept_name(c)}" for _f, c in untested]
    failing = _listed(report, ConceptStatus.FAILING)
    if failing:
        out += ["", "Tested only by failing checks:"]
        out += [f"  {c.path}:{c.line}: {concept_name(c)} (by {_titles(c)})" for _f, c in failing]
    notes = [(f.path, line_, message) for f in report.files for line_, message in f.notes]
    if notes:
        out += ["", "Notes:"] + [f"  {path}:{line_}: {message}" for path, line_, message in notes]
    return printable("\n".join(out))


def _titles(concept: Concept) -> str:
    return ", ".join(p.title for p in concept.problems)


def _concept_json(concept: Concept) -> dict[str, object]:
    return {
        "name": concept.name,
        "kind": str(concept.kind),
        "line": concept.line,
        "status": str(concept.status),
        "problems": [
            {"path": p.path, "title": p.title, "line": p.line, "status": str(p.status)} for p in concept.problems
        ],
    }


def _counts(problems: list[ProblemStatus]) -> dict[str, int]:
    return {str(s): sum(p == s for p in problems) for s in ProblemStatus}


def to_json(report: CoverageReport) -> str:
    """The report as JSON (``version`` 1): files, sections, concepts with the problems covering them, totals."""
    files = []
    for file in report.files:
        sections = [
            {
                "title": s.title, "level": s.level, "line": s.line,
                "concepts": s.total, "covered": s.covered, "percent": round(s.percent, 2),
                "problems": _counts([p.status for p in s.problems]), "checks": s.checks,
                "items": [_concept_json(c) for c in s.concepts],
            }
            for s in file.sections
        ]  # fmt: skip
        files.append({
            "path": file.path, "concepts": file.total, "covered": file.covered, "percent": round(file.percent, 2),
            "sections": sections, "notes": [{"line": n, "message": m} for n, m in file.notes],
        })  # fmt: skip
    totals = {
        "files": len(report.files),
        "concepts": report.total,
        "covered": report.covered,
        "percent": round(report.percent, 2),
    }
    return json_text({"version": SCHEMA_VERSION, "files": files, "totals": totals})


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: CoverageReport) -> str:
    """A GitHub-flavoured Markdown table (for a pull request comment or a job summary) and the untested list."""
    header = "| " + " | ".join(_HEADER) + " |"
    align = "|" + "|".join([":---"] + ["---:"] * (len(_HEADER) - 1)) + "|"
    lines = ["## Coverage", "", header, align]
    for cells, main in _rows(report):
        name = f"**{_md(cells[0])}**" if main else "&nbsp;&nbsp;" + _md(cells[0].strip())
        lines.append("| " + " | ".join([name, *cells[1:]]) + " |")
    untested = _listed(report, ConceptStatus.UNTESTED)
    if untested:
        lines += ["", "### Untested concepts", ""]
        lines += [f"- `{_md(c.path)}:{c.line}` {_md(concept_name(c))}" for _f, c in untested]
    failing = _listed(report, ConceptStatus.FAILING)
    if failing:
        lines += ["", "### Tested only by failing checks", ""]
        lines += [f"- `{_md(c.path)}:{c.line}` {_md(concept_name(c))} (by {_md(_titles(c))})" for _f, c in failing]
    return "\n".join(lines)
