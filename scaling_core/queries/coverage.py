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
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TypeVar, cast

from scaling_core.document.lookup import bindings_index, once_per_analysis
from scaling_core.document.results import CheckResult, DocumentAnalysis
from scaling_core.queries.coverage_graph import FileGraph, Heading, Node, binding_node, headings
from scaling_core.queries.coverage_model import (
    Concept,
    ConceptKind,
    ConceptStatus,
    CoverageReport,
    FileCoverage,
    ProblemRef,
    SectionCoverage,
)
from scaling_core.queries.coverage_one import problems_testing
from scaling_core.queries.coverage_walk import Edges, cover_problem, problem_ref
from scaling_core.text import Span, holding_position

#: Where an analysis keeps which of its problems cover what (:func:`covering_of`), once worked out.
_COVERING = "covering"
_Item = TypeVar("_Item")
#: Which problems cover each node (and whether through a passing check), and each file's notes.
_Walk = tuple[dict[Node, list[tuple[ProblemRef, bool]]], dict[str, list[tuple[int, str]]]]


#: Definitions, values, checks, uses or headings :func:`coverage_unless_stopped` reads between two questions to
#: ``go_on`` (~1 ms of work on a 2-core machine: a keystroke during the preparation waits about that long, and the
#: editor's reader thread and event loop, which share the interpreter lock with it, get it back as soon).
ITEMS_BETWEEN_QUESTIONS = 300
#: Problems walked between two questions (a problem's walk reads its checks' statements: ~60 µs each).
PROBLEMS_BETWEEN_QUESTIONS = 20
#: Headings whose sections are made between two questions (a heading's section reads its subsections': the
#: first of a book reads all of them, ~1 ms on 10,000 lines; most read their own).
HEADINGS_BETWEEN_QUESTIONS = 50


def document_coverage(analysis: DocumentAnalysis) -> FileCoverage:
    """Coverage of one draft by its own problems (the editor's view).

    Which problems cover what is worked out once per analysis and shared with
    :func:`definition_coverage` (the hover's question).
    """
    covering, notes = _own_covering(analysis)
    return _file(FileGraph(analysis), covering, tuple(notes.get(analysis.path, ())))


def coverage_unless_stopped(analysis: DocumentAnalysis, go_on: Callable[[], bool]) -> FileCoverage | None:
    """:func:`document_coverage`, asking ``go_on`` every :data:`ITEMS_BETWEEN_QUESTIONS` concepts or uses
    read: None once it says no (the draft changed: the editor prepares the coverage while the author
    pauses, and a keystroke then waits for one slice of it, not for the whole draft's 20-75 ms on
    10,000 lines)."""
    if not go_on():
        return None
    covering, notes = _own_covering(analysis)
    if not go_on():
        return None
    return _file_unless_stopped(FileGraph(analysis), covering, tuple(notes.get(analysis.path, ())), go_on)


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
    walked = _covering(graphs)
    assert walked is not None  # nothing stops it
    covering, notes = walked
    files = tuple(_file(graphs[a.path], covering, tuple(notes.get(a.path, ()))) for a in analyses)
    return CoverageReport(files)


def definition_coverage(analysis: DocumentAnalysis, start: int) -> Concept | None:
    """The definition concept of this draft whose name starts at ``start``, with the problems that test it.

    What :func:`document_coverage` says of that one definition (None for a name
    defined in a problem, or no definition there), without the rest: the
    editor's hover asks this after each edit, and the whole draft's coverage
    costs ~0.1 s on 10,000 lines.  Which problems cover what is computed once
    per analysis (kept with its lookups); the definitions' concepts are not.
    Until it is, only the problems that could test this definition are walked
    (``coverage_one``).
    """
    at = bindings_index(analysis).starting_between(start, start + 1)
    binding = next((b for b in at if b.path == analysis.path), None)
    if binding is None or analysis.problem_at(start) is not None:
        return None
    node = binding_node(binding)
    walked = analysis.lookups.get(_COVERING)
    tests = cast(_Walk, walked)[0].get(node, []) if walked is not None else problems_testing(analysis, binding)
    if tests is None:  # its name is written all over: the whole draft's walk, kept for the next hover
        tests = covering_of(analysis).get(node, [])
    return _concept(analysis, {node: tests}, node, binding.name, ConceptKind.DEFINITION, binding.span)


def covering_of(analysis: DocumentAnalysis) -> dict[Node, list[tuple[ProblemRef, bool]]]:
    """Which of the draft's own problems cover each node, and whether through a passing check (once per analysis)."""
    return _own_covering(analysis)[0]


def _own_covering(analysis: DocumentAnalysis) -> _Walk:
    """:func:`_covering` of the draft by its own problems, kept with the analysis's lookups."""
    found = once_per_analysis(analysis, _COVERING, _covering_by_own_problems)
    return found  # type: ignore[return-value]  # not None: nothing stops it


def covering_unless_stopped(analysis: DocumentAnalysis, go_on: Callable[[], bool]) -> bool:
    """Work out :func:`covering_of` now, asking ``go_on`` between slices of the checks and problems walked:
    False, nothing kept, once it says no (the editor's preparation while the author pauses)."""
    if analysis.lookups.get(_COVERING) is not None:
        return True
    walked = _covering_by_own_problems(analysis, go_on)
    if walked is None:
        return False
    analysis.lookups.setdefault(_COVERING, walked)
    return True


def _covering_by_own_problems(analysis: DocumentAnalysis, go_on: Callable[[], bool] | None = None) -> _Walk | None:
    """:func:`_covering` of one draft; without problems, nothing covers anything and nothing is read.

    A draft with no problem (most chapters while they are being written) would otherwise move every value,
    check and reference into place to find that out (~30 ms after a keystroke near the top of 10,000 lines).
    """
    if not analysis.problems:
        return {}, {}
    return _covering({analysis.path: FileGraph(analysis)}, go_on)


def _covering(graphs: dict[str, FileGraph], go_on: Callable[[], bool] | None = None) -> _Walk | None:
    """Which problems cover each node (and whether through a passing check), and each file's notes (None once
    ``go_on`` says no: asked between slices of the checks and of the problems)."""
    edges = Edges(graphs.values())
    covering: dict[Node, list[tuple[ProblemRef, bool]]] = {}
    notes: dict[str, list[tuple[int, str]]] = {}
    for graph in graphs.values():
        problems = graph.analysis.problems
        holding = holding_position(problems)
        checks: list[list[CheckResult]] = [[] for _ in problems]
        for some in _slices(graph.analysis.checks, go_on):
            if some is None:
                return None
            for check in some:
                at = holding(check.span.start)
                if at >= 0 and graph.counts(check):
                    checks[at].append(check)
        found_notes = notes.setdefault(graph.analysis.path, [])
        for numbers in _slices(range(len(problems)), go_on, PROBLEMS_BETWEEN_QUESTIONS):
            if numbers is None:
                return None
            for number in numbers:
                cover_problem(graph, problems[number], checks[number], edges, covering, found_notes)
    return covering, notes


def _file(
    graph: FileGraph, covering: dict[Node, list[tuple[ProblemRef, bool]]], notes: tuple[tuple[int, str], ...]
) -> FileCoverage:
    """The file's coverage: its concepts, by section."""
    found = _file_unless_stopped(graph, covering, notes, None)
    assert found is not None  # nothing stops it
    return found


def _file_unless_stopped(
    graph: FileGraph,
    covering: dict[Node, list[tuple[ProblemRef, bool]]],
    notes: tuple[tuple[int, str], ...],
    go_on: Callable[[], bool] | None,
) -> FileCoverage | None:
    """:func:`_file`, or None once ``go_on`` says no (asked between slices of its definitions and uses)."""
    analysis = graph.analysis
    found: list[tuple[int, Concept]] = []
    concept = partial(_concept, analysis, covering)
    holding = holding_position(analysis.problems)
    for bindings in _slices(analysis.bindings, go_on):
        if bindings is None:
            return None
        for binding in bindings:
            if binding.path == analysis.path and holding(binding.start) < 0:
                node = binding_node(binding)
                found.append((binding.start, concept(node, binding.name, ConceptKind.DEFINITION, binding.span)))
    used: dict[Node, tuple[str, int]] = {}
    for reaches in _reaches(graph, go_on):  # what each value and check reads
        if reaches is None:
            return None
        for reach in reaches:
            if holding(reach.start) < 0:
                for node, name, offset in graph.outside_uses(reach):
                    if node not in used or offset < used[node][1]:
                        used[node] = (name, offset)
    for uses in _slices(list(used.items()), go_on):
        if uses is None:
            return None
        for node, (name, offset) in uses:
            kind = (
                ConceptKind.FORMULA if node[0] == "formula"
                else ConceptKind.FIELD if "." in name
                else ConceptKind.SLICE
            )  # fmt: skip
            found.append((offset, concept(node, name, kind, Span(offset, offset + len(name)))))
    if go_on is not None and not go_on():
        return None
    found.sort(key=lambda item: item[0])
    sections = _sections(analysis, headings(analysis), found, go_on)
    return None if sections is None else FileCoverage(analysis.path, tuple(sections), notes)


def _reaches(graph: FileGraph, go_on: Callable[[], bool] | None) -> Iterator[list[Span] | None]:
    """The spans the analysis's values and checks read, a slice at a time (see :func:`_slices`)."""
    for values in _slices(graph.analysis.values, go_on):
        yield None if values is None else [value.span for value in values]
    for checks in _slices(graph.analysis.checks, go_on):
        yield None if checks is None else [graph.check_reach(check) for check in checks]


def _slices(
    items: Sequence[_Item], go_on: Callable[[], bool] | None, size: int = 0
) -> Iterator[Sequence[_Item] | None]:
    """``items`` ``size`` at a time (:data:`ITEMS_BETWEEN_QUESTIONS` unless given; all at once without
    ``go_on``); None, and no more, once ``go_on`` says no."""
    if go_on is None:
        yield items
        return
    size = size or ITEMS_BETWEEN_QUESTIONS
    for start in range(0, len(items), size):
        if not go_on():
            yield None
            return
        yield items[start : start + size]


def _concept(
    analysis: DocumentAnalysis,
    covering: dict[Node, list[tuple[ProblemRef, bool]]],
    node: Node,
    name: str,
    kind: ConceptKind,
    span: Span,
) -> Concept:
    """The concept of ``node``: tested, failing or untested, and by which problems."""
    refs = covering.get(node, [])
    status = (
        ConceptStatus.UNTESTED if not refs
        else ConceptStatus.TESTED if any(passing for _ref, passing in refs)
        else ConceptStatus.FAILING
    )  # fmt: skip
    problems = tuple(dict.fromkeys(ref for ref, _passing in refs))
    return Concept(name, kind, analysis.path, span, analysis.line(span.start), status, problems)


def _sections(
    analysis: DocumentAnalysis,
    found_headings: list[Heading],
    concepts: list[tuple[int, Concept]],
    go_on: Callable[[], bool] | None = None,
) -> list[SectionCoverage] | None:
    """Each heading's section with its own concepts and problems (None once ``go_on`` says no: asked
    between slices of the concepts and of the headings)."""
    starts = [h.span.start for h in found_headings]
    own: list[list[Concept]] = [[] for _ in range(len(found_headings) + 1)]  # [0]: before the first heading
    own_problems: list[list[ProblemRef]] = [[] for _ in own]
    for some in _slices(concepts, go_on):
        if some is None:
            return None
        for offset, item in some:
            own[_section_of(starts, offset)].append(item)
    for problem in analysis.problems:
        own_problems[_section_of(starts, problem.span.start)].append(problem_ref(analysis, problem))
    sections = []
    if own[0] or own_problems[0]:
        sections.append(SectionCoverage("", 0, 1, Span(0, 0), tuple(own[0]), tuple(own_problems[0])))
    ends = _section_ends(found_headings)
    for number, heading in enumerate(found_headings):
        if number % HEADINGS_BETWEEN_QUESTIONS == 0 and go_on is not None and not go_on():
            return None
        inside = range(number + 1, 1 + ends[number])  # in ``own``: this heading's section and its subsections'
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


def _section_ends(found_headings: list[Heading]) -> list[int]:
    """For each heading, the index of the next heading at its level or above (``len(found_headings)``: none).

    One pass with a stack of the headings still open: linear in the number of headings.
    """
    ends = [len(found_headings)] * len(found_headings)
    open_headings: list[int] = []
    for number, heading in enumerate(found_headings):
        while open_headings and found_headings[open_headings[-1]].level >= heading.level:
            ends[open_headings.pop()] = number
        open_headings.append(number)
    return ends


def _section_of(starts: list[int], offset: int) -> int:
    """The index in ``own`` of the section holding ``offset`` (0: before the first heading)."""
    return bisect.bisect_right(starts, offset)
