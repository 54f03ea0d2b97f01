"""The HTML report of ``margin coverage --format html``: one self-contained page, like coverage.py's.

An index table (one row per file, then the total), then each file: its
sections with their headings marked green (covered) or red (untested), each
concept marked green, amber (tested only by failing checks) or red, with
links to the problems that cover it, and the file's problems with their
verdicts.  No script, no external resource: the page opens from disk.
"""

from __future__ import annotations

from html import escape

from scaling_core.queries.coverage_model import Concept, ConceptKind, CoverageReport, FileCoverage, ProblemRef
from server.coverage_report import section_name, shown

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.tested, .pass { background: #dfd; } .untested, .fail { background: #fdd; } .failing { background: #fec; }
section.file { margin-top: 2em; border-top: 2px solid #888; }
h3.tested, h3.untested { padding: 0.2em 0.4em; }
li { margin: 0.15em 0; padding: 0.1em 0.4em; list-style: none; }
.kind { color: #666; font-size: 90%; } .line { color: #666; font-family: monospace; }
code { font-size: 95%; }
"""


def _anchor(paths: dict[str, int], ref: ProblemRef) -> str:
    number = paths.get(ref.path)
    return f"p{number}-{ref.line}" if number is not None else ""


def _problem_link(paths: dict[str, int], ref: ProblemRef) -> str:
    anchor = _anchor(paths, ref)
    label = escape(ref.title) + (f" ({escape(ref.path)})" if len(paths) > 1 else "") + f" — {escape(str(ref.status))}"
    return f'<a href="#{anchor}">{label}</a>' if anchor else label


def _concept(paths: dict[str, int], concept: Concept) -> str:
    links = ", ".join(_problem_link(paths, p) for p in concept.problems) or "no problem tests it"
    kind = "" if concept.kind == ConceptKind.DEFINITION else f' <span class="kind">{escape(str(concept.kind))}</span>'
    return (
        f'<li class="concept {concept.status}" data-status="{concept.status}"><span class="line">{concept.line}</span> '
        f"<code>{escape(concept.name)}</code>{kind}: {links}</li>"
    )


def _file(number: int, paths: dict[str, int], file: FileCoverage) -> str:
    parts = [
        f'<section class="file" id="f{number}"><h2>{escape(file.path)}: {file.covered} of {file.total} '
        f"concepts tested ({shown(file.percent)})</h2>"
    ]
    for section in file.sections:
        head = section.concepts[0] if section.level else None
        status = head.status if head is not None else ("tested" if section.covered == section.total else "untested")
        parts.append(
            f'<h3 class="heading {status}" data-status="{status}">{escape(section_name(section))} '
            f'<span class="kind">line {section.line}: {section.covered}/{section.total} ({shown(section.percent)})</span></h3>'
        )
        concepts = [c for c in section.concepts if c.kind != ConceptKind.SECTION]
        if concepts:
            parts.append("<ul>" + "".join(_concept(paths, c) for c in concepts) + "</ul>")
    if file.problems:
        parts.append("<h3>Problems</h3><ul>")
        for problem in file.problems:
            parts.append(
                f'<li class="problem {problem.status}" id="p{number}-{problem.line}">{escape(problem.title)}: {escape(str(problem.status))} '
                f'<span class="kind">{problem.passed} of {problem.total} checks pass</span></li>'
            )
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def to_html(report: CoverageReport) -> str:
    """The whole page."""
    paths = {file.path: number for number, file in enumerate(report.files)}
    rows = "".join(
        f'<tr><td><a href="#f{n}">{escape(f.path)}</a></td><td>{f.total}</td><td>{f.covered}</td>'
        f"<td>{f.total - f.covered}</td><td>{shown(f.percent)}</td><td>{len(f.problems)}</td></tr>"
        for n, f in enumerate(report.files)
    )
    total = (
        f"<tr><th>Total</th><th>{report.total}</th><th>{report.covered}</th><th>{report.total - report.covered}</th>"
        f"<th>{shown(report.percent)}</th><th>{sum(len(f.problems) for f in report.files)}</th></tr>"
    )
    body = "\n".join(_file(n, paths, f) for n, f in enumerate(report.files))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Margin coverage: {shown(report.percent)}</title><style>{_STYLE}</style></head><body>\n"
        f"<h1>Margin coverage: {report.covered} of {report.total} concepts tested ({shown(report.percent)})</h1>\n"
        "<table><tr><th>File</th><th>Concepts</th><th>Covered</th><th>Miss</th><th>Cover</th><th>Problems</th></tr>"
        f"{rows}{total}</table>\n{body}\n</body></html>\n"
    )
