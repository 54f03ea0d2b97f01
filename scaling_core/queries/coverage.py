"""Coverage: which concepts a draft introduces, and which problems test them.

A *concept* is what an author introduces outside problems: a definition (a
calc name), a chip field or library formula used in prose or in a definition,
and each section heading.  A problem *covers* a concept when one of its
checks uses it, directly or through the definitions it is built from (the
dependency graph of :mod:`coverage_graph`), or when the problem declares
``<!-- tests: name, other -->``.  A suppressed or skipped check covers
nothing; a failing check covers, and the concept is reported as *failing*.
A section is covered when a problem sits in it (or in a subsection) or covers
one of its concepts.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import field
from enum import StrEnum

from scaling_core.document.results import CheckResult, DocumentAnalysis, ProblemResult, ProblemStatus
from scaling_core.formulas import LIBRARY
from scaling_core.queries.coverage_graph import FileGraph, Heading, Node, binding_node, headings
from scaling_core.records import record
from scaling_core.text import Span, holding


class ConceptKind(StrEnum):
    """What a concept is."""

    DEFINITION = "definition"
    FIELD = "chip field"
    SLICE = "slice"  # tpu_v5p["4x4x4"] used as a whole
    FORMULA = "formula"
    SECTION = "section"


class ConceptStatus(StrEnum):
    """Whether a concept is tested."""

    TESTED = "tested"  # a passing check (or a declaration) of some problem covers it
    FAILING = "failing"  # covered only by failing checks
    UNTESTED = "untested"  # no problem covers it


@record
class ProblemRef:
    """A problem that covers a concept (possibly in another file)."""

    path: str
    title: str
    line: int
    status: ProblemStatus
    #: Its checks: how many pass, of how many.
    passed: int = 0
    total: int = 0


@record
class Concept:
    """One concept of a draft, with its verdict."""

    name: str
    kind: ConceptKind
    path: str
    span: Span
    line: int
    status: ConceptStatus
    problems: tuple[ProblemRef, ...] = ()

    @property
    def covered(self) -> bool:
        """Whether some problem covers it (passing or not)."""
        return self.status != ConceptStatus.UNTESTED


@record
class SectionCoverage:
    """A section (heading to the next heading) and its own concepts and problems."""

    title: str  # "" for the text before the first heading
    level: int
    line: int
    span: Span
    concepts: tuple[Concept, ...]
    problems: tuple[ProblemRef, ...]

    @property
    def total(self) -> int:
        """How many concepts it introduces (its heading included)."""
        return len(self.concepts)

    @property
    def covered(self) -> int:
        """How many of them some problem covers."""
        return sum(c.covered for c in self.concepts)

    @property
    def percent(self) -> float:
        """Covered concepts in percent (100 with no concept)."""
        return percent(self.covered, self.total)

    @property
    def checks(self) -> int:
        """Checks in the problems of this section."""
        return sum(p.total for p in self.problems)

    def count(self, status: ProblemStatus) -> int:
        """How many of its problems have ``status``."""
        return sum(p.status == status for p in self.problems)


@record
class FileCoverage:
    """One draft's coverage, section by section."""

    path: str
    sections: tuple[SectionCoverage, ...]
    #: Declarations naming nothing known: (line, message).
    notes: tuple[tuple[int, str], ...] = ()

    @property
    def concepts(self) -> list[Concept]:
        """Every concept of the draft, in document order."""
        return [c for s in self.sections for c in s.concepts]

    @property
    def total(self) -> int:
        """How many concepts the draft introduces."""
        return sum(s.total for s in self.sections)

    @property
    def covered(self) -> int:
        """How many of them are covered."""
        return sum(s.covered for s in self.sections)

    @property
    def percent(self) -> float:
        """Covered concepts in percent."""
        return percent(self.covered, self.total)

    @property
    def problems(self) -> list[ProblemRef]:
        """Every problem of the draft."""
        return [p for s in self.sections for p in s.problems]


@record
class CoverageReport:
    """Coverage of several drafts, with a total."""

    files: tuple[FileCoverage, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        """Concepts in every draft."""
        return sum(f.total for f in self.files)

    @property
    def covered(self) -> int:
        """Covered concepts in every draft."""
        return sum(f.covered for f in self.files)

    @property
    def percent(self) -> float:
        """The total in percent (what ``--fail-under`` compares)."""
        return percent(self.covered, self.total)


def percent(part: int, whole: int) -> float:
    """``part`` of ``whole`` in percent; 100 when there is nothing to cover."""
    return 100.0 * part / whole if whole else 100.0


def document_coverage(analysis: DocumentAnalysis) -> FileCoverage:
    """Coverage of one draft by its own problems (the editor's view)."""
    return workspace_coverage([analysis]).files[0]


def workspace_coverage(
    analyses: Sequence[DocumentAnalysis], context: Iterable[DocumentAnalysis] = ()
) -> CoverageReport:
    """Coverage of ``analyses`` by the problems of every analysis given.

    ``context`` adds analyses that are not reported but whose definitions and
    problems count (the files the reported ones import): a problem in a file
    that imports this one covers this one's concepts.
    """
    graphs = {a.path: FileGraph(a) for a in context}
    graphs.update((a.path, FileGraph(a)) for a in analyses)
    edges = _edges(graphs.values())
    covering: dict[Node, list[tuple[ProblemRef, bool]]] = {}
    notes: dict[str, list[tuple[int, str]]] = {}
    for graph in graphs.values():
        problems = graph.analysis.problems
        checks: dict[int, list[CheckResult]] = {}
        for check in graph.analysis.checks:
            inside = holding(problems, check.span.start) if problems else None
            if inside is not None and graph.counts(check):
                checks.setdefault(id(inside), []).append(check)
        for problem in problems:
            found = checks.get(id(problem), [])
            _cover(graph, problem, found, edges, covering, notes.setdefault(graph.analysis.path, []))
    files = tuple(_file(graphs[a.path], covering, tuple(notes.get(a.path, ()))) for a in analyses)
    return CoverageReport(files)


def _edges(graphs: Iterable[FileGraph]) -> dict[Node, set[Node]]:
    edges: dict[Node, set[Node]] = {}
    for graph in graphs:
        for binding in graph.analysis.bindings:
            if binding.path == graph.analysis.path:
                node = binding_node(binding)
                edges[node] = {used for used, _name, _at in graph.uses(graph.statement(binding))} - {node}
    return edges


def _closure(start: Iterable[Node], edges: dict[Node, set[Node]]) -> set[Node]:
    seen: set[Node] = set()
    stack = list(start)
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return seen


def _cover(
    graph: FileGraph,
    problem: ProblemResult,
    checks: list[CheckResult],
    edges: dict[Node, set[Node]],
    covering: dict[Node, list[tuple[ProblemRef, bool]]],
    notes: list[tuple[int, str]],
) -> None:
    analysis = graph.analysis
    ref = _ref(analysis, problem)
    reached: dict[Node, bool] = {}  # node -> whether a passing check (or a declaration) reaches it
    for check in checks:
        passing = check.status != "fail"
        for node in _closure((n for n, _name, _at in graph.uses(graph.check_reach(check))), edges):
            reached[node] = reached.get(node, False) or passing
    for name, offset in graph.declared(problem.span):
        declared = _declared_node(analysis, name, problem)
        if declared is None:
            notes.append(
                (analysis.line(offset), f"'{name}' in a tests: declaration names no definition, chip field or formula")
            )
            continue
        for found in _closure((declared,), edges):
            reached[found] = True
    for node, passing in reached.items():
        covering.setdefault(node, []).append((ref, passing))


def _declared_node(analysis: DocumentAnalysis, name: str, problem: ProblemResult) -> Node | None:
    name = name.removesuffix("()").strip("` ")
    chip, dot, _rest = name.partition(".")
    base = chip.partition("[")[0]
    if (dot or "[" in name) and base in analysis.records:
        return ("field", analysis.path, name.replace(" ", ""))
    local = [
        b for b in analysis.bindings
        if b.name == name and b.path == analysis.path and b.span.start < problem.span.start
        and analysis.problem_at(b.span.start) is None
    ]  # fmt: skip
    if local:
        return binding_node(local[-1])
    if name in analysis.exports:
        return binding_node(analysis.exports[name])
    if name in LIBRARY:
        return ("formula", analysis.path, name)
    return None


def _file(
    graph: FileGraph, covering: dict[Node, list[tuple[ProblemRef, bool]]], notes: tuple[tuple[int, str], ...]
) -> FileCoverage:
    analysis = graph.analysis
    found: list[tuple[int, Concept]] = []

    def concept(node: Node, name: str, kind: ConceptKind, span: Span) -> Concept:
        refs = covering.get(node, [])
        status = (
            ConceptStatus.UNTESTED if not refs
            else ConceptStatus.TESTED if any(passing for _ref, passing in refs)
            else ConceptStatus.FAILING
        )  # fmt: skip
        problems = tuple(dict.fromkeys(ref for ref, _passing in refs))
        return Concept(name, kind, analysis.path, span, analysis.line(span.start), status, problems)

    for binding in analysis.bindings:
        if binding.path == analysis.path and analysis.problem_at(binding.span.start) is None:
            found.append(
                (binding.span.start, concept(binding_node(binding), binding.name, ConceptKind.DEFINITION, binding.span))
            )
    used: dict[Node, tuple[str, int]] = {}
    reaches = [v.span for v in analysis.values] + [graph.check_reach(c) for c in analysis.checks]
    for reach in reaches:
        if analysis.problem_at(reach.start) is None:
            for node, name, offset in graph.uses(reach):
                if node[0] != "def" and (node not in used or offset < used[node][1]):
                    used[node] = (name, offset)
    for node, (name, offset) in used.items():
        kind = (
            ConceptKind.FORMULA if node[0] == "formula"
            else ConceptKind.FIELD if "." in name
            else ConceptKind.SLICE
        )  # fmt: skip
        found.append((offset, concept(node, name, kind, Span(offset, offset + len(name)))))
    found.sort(key=lambda item: item[0])
    return FileCoverage(analysis.path, tuple(_sections(analysis, headings(analysis), found)), notes)


def _sections(
    analysis: DocumentAnalysis,
    found_headings: list[Heading],
    concepts: list[tuple[int, Concept]],
) -> list[SectionCoverage]:
    starts = [h.span.start for h in found_headings]
    bounds = starts + [len(analysis.text) + 1]
    own: list[list[Concept]] = [[] for _ in range(len(found_headings) + 1)]  # [0]: before the first heading
    own_problems: list[list[ProblemRef]] = [[] for _ in own]
    for offset, item in concepts:
        own[_section_of(starts, offset)].append(item)
    for problem in analysis.problems:
        own_problems[_section_of(starts, problem.span.start)].append(_ref(analysis, problem))
    sections = []
    if own[0] or own_problems[0]:
        sections.append(SectionCoverage("", 0, 1, Span(0, 0), tuple(own[0]), tuple(own_problems[0])))
    for number, heading in enumerate(found_headings):
        end = next((h.span.start for h in found_headings[number + 1 :] if h.level <= heading.level), bounds[-1])
        inside = range(number + 1, 1 + next((i for i, s in enumerate(starts) if s >= end), len(starts)))
        covered = any(own_problems[i] for i in inside) or any(c.covered for i in inside for c in own[i])
        refs = tuple(dict.fromkeys(
            ref for i in inside for c in own[i] for ref in c.problems
        )) + tuple(p for i in inside for p in own_problems[i])  # fmt: skip
        status = ConceptStatus.TESTED if covered else ConceptStatus.UNTESTED
        line = analysis.line(heading.span.start)
        head = Concept(
            heading.title, ConceptKind.SECTION, analysis.path, heading.span, line, status, tuple(dict.fromkeys(refs))
        )
        sections.append(
            SectionCoverage(
                heading.title,
                heading.level,
                line,
                heading.span,
                (head, *own[number + 1]),
                tuple(own_problems[number + 1]),
            )
        )
    return sections


def _section_of(starts: list[int], offset: int) -> int:
    """The index in ``own`` of the section holding ``offset`` (0: before the first heading)."""
    return bisect.bisect_right(starts, offset)


def _ref(analysis: DocumentAnalysis, problem: ProblemResult) -> ProblemRef:
    line = analysis.line(problem.title_span.start)
    return ProblemRef(analysis.path, problem.title, line, problem.status, problem.passed, problem.total)
