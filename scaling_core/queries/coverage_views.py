"""What the editor shows of coverage: a lens per heading, untested definitions, who tests a name."""

from __future__ import annotations

from pathlib import PurePath

from scaling_core.document.derivation import escape
from scaling_core.queries.coverage_model import Concept, ConceptKind, ConceptStatus, FileCoverage, ProblemRef, percent
from scaling_core.text import Span


def rounded_percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a whole percentage, never 100% unless all, never 0% unless none."""
    share = percent(part, whole)
    shown = round(share)
    if shown == 100 and share < 100:
        shown = 99
    elif shown == 0 and share > 0:
        shown = 1
    return f"{shown}%"


def heading_lenses(coverage: FileCoverage) -> list[tuple[Span, str]]:
    """A code lens per heading, over the section and its subsections: ``3 problems · 12 checks · 80% of concepts tested``."""
    sections = coverage.sections
    lenses = []
    for number, section in enumerate(sections):
        if not section.level:
            continue
        end = next((i for i in range(number + 1, len(sections)) if sections[i].level <= section.level), len(sections))
        inside = sections[number:end]
        problems = sum(len(s.problems) for s in inside)
        checks = sum(s.checks for s in inside)
        covered, total = sum(s.covered for s in inside), sum(s.total for s in inside)
        shown = rounded_percent(covered, total)
        text = f"{problems} problem{'s' * (problems != 1)} · {checks} check{'s' * (checks != 1)} · {shown} of concepts tested"
        lenses.append((section.span, text))
    return lenses


def untested_definitions(coverage: FileCoverage) -> list[tuple[Span, str]]:
    """Each definition no problem tests, with the words of its information diagnostic."""
    return [
        (c.span, f"no problem tests `{c.name}`")
        for c in coverage.concepts
        if c.kind == ConceptKind.DEFINITION and c.status == ConceptStatus.UNTESTED
    ]


def problems_testing(coverage: FileCoverage, offset: int) -> Concept | None:
    """The concept whose name is at ``offset`` (a definition's name, a heading), with the problems that test it."""
    return next((c for c in coverage.concepts if c.span.contains(offset)), None)


def definition_concept(coverage: FileCoverage, start: int) -> Concept | None:
    """The definition concept whose name starts at ``start`` (None for a name defined in a problem)."""
    return next((c for c in coverage.concepts if c.kind == ConceptKind.DEFINITION and c.span.start == start), None)


_MARKS = {"pass": "✓", "fail": "✗", "untested": "○"}


def tested_by(concept: Concept) -> str:
    """Markdown for a hover: the problems that test ``concept``, with their verdicts, or that none does."""
    if not concept.problems:
        return f"No problem tests `{concept.name}` yet."
    refs = ", ".join(_problem(p, concept.path) for p in concept.problems)
    lead = "Tested only by failing checks of" if concept.status == ConceptStatus.FAILING else "Tested by"
    return f"{lead} {refs}."


def _problem(problem: ProblemRef, path: str) -> str:
    where = f"line {problem.line}" if problem.path == path else f"{PurePath(problem.path).name}:{problem.line}"
    verdict = f"{_MARKS.get(problem.status, '')} {problem.passed}/{problem.total} checks pass"
    return f"**{escape(problem.title)}** ({where}, {verdict})"
