"""Walking the coverage graph from each problem: the nodes its checks and declarations reach.

A problem reaches what its counted checks use, directly or through the
definitions they are built from (each definition's statement, read once per
walk: :class:`Edges`), and what its ``<!-- tests: ... -->`` comments declare.
A node reached by a passing check or a declaration is reached *passing*.
"""

from __future__ import annotations

from collections.abc import Iterable

from scaling_core.document.results import CheckResult, DocumentAnalysis, ProblemResult
from scaling_core.formulas import LIBRARY
from scaling_core.queries.coverage_graph import FileGraph, Node, binding_node
from scaling_core.queries.coverage_model import ProblemRef


class Edges:
    """What each definition's statement uses, read when a walk from a problem first reaches it."""

    def __init__(self, graphs: Iterable[FileGraph]) -> None:
        self._found: dict[Node, set[Node]] = {}
        self._graphs = {graph.analysis.path: graph for graph in graphs}

    def get(self, node: Node, default: Iterable[Node] = ()) -> Iterable[Node]:
        """The nodes ``node``'s definition uses (``default`` for a chip field, a formula, another file's name)."""
        found = self._found.get(node)
        if found is not None:
            return found
        kind, path, start = node
        graph = self._graphs.get(path) if kind == "def" else None
        binding = graph.defined_at(int(start)) if graph is not None else None
        if graph is None or binding is None:
            return default
        found = self._found[node] = {used for used, _name, _at in graph.uses(graph.statement(binding))} - {node}
        return found


def closure(start: Iterable[Node], edges: Edges) -> set[Node]:
    """Every node reachable from ``start`` through ``edges`` (``start`` included)."""
    seen: set[Node] = set()
    stack = list(start)
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return seen


def cover_problem(
    graph: FileGraph,
    problem: ProblemResult,
    checks: list[CheckResult],
    edges: Edges,
    covering: dict[Node, list[tuple[ProblemRef, bool]]],
    notes: list[tuple[int, str]],
) -> None:
    """Add ``problem`` to ``covering`` for each node its counted ``checks`` and its declarations reach (with
    whether a passing check or a declaration reaches it); a declaration naming nothing adds a note."""
    analysis = graph.analysis
    ref = problem_ref(analysis, problem)
    reached: dict[Node, bool] = {}  # node -> whether a passing check (or a declaration) reaches it
    for check in checks:
        passing = check.status != "fail"
        for node in closure((n for n, _name, _at in graph.uses(graph.check_reach(check))), edges):
            reached[node] = reached.get(node, False) or passing
    for name, offset in graph.declared(problem.span):
        declared = declared_node(analysis, name, problem)
        if declared is None:
            notes.append(
                (analysis.line(offset), f"'{name}' in a tests: declaration names no definition, chip field or formula")
            )
            continue
        for found in closure((declared,), edges):
            reached[found] = True
    for node, passing in reached.items():
        covering.setdefault(node, []).append((ref, passing))


def declared_node(analysis: DocumentAnalysis, name: str, problem: ProblemResult) -> Node | None:
    """The node a ``tests:`` declaration's ``name`` means in ``problem``: a chip field, the definition visible
    there, an imported name or a library formula (None: nothing)."""
    name = name.removesuffix("()").strip("` ")
    chip, dot, _rest = name.partition(".")
    base = chip.partition("[")[0]
    if (dot or "[" in name) and base in analysis.records:
        return ("field", analysis.path, name.replace(" ", ""))
    local = [
        b for b in analysis.bindings
        if b.name == name and b.path == analysis.path and b.start < problem.span.start
        and analysis.problem_at(b.start) is None
    ]  # fmt: skip
    if local:
        return binding_node(local[-1])
    if name in analysis.exports:
        return binding_node(analysis.exports[name])
    if name in LIBRARY:
        return ("formula", analysis.path, name)
    return None


def problem_ref(analysis: DocumentAnalysis, problem: ProblemResult) -> ProblemRef:
    """How coverage names ``problem``: its file, title, line and verdict."""
    line = analysis.line(problem.title_span.start)
    return ProblemRef(analysis.path, problem.title, line, problem.status, problem.passed, problem.total)
