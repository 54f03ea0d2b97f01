"""Which problems test one definition, reading only the problems that could.

A hover on a definition says which problems test it.  The whole draft's walk
(``coverage._covering``) reads every check and every reference, and right
after a keystroke near the top of a long draft that means moving each of them
into place first: 20-40 ms of a hover on 10,000 lines.  Here the question is
asked of one definition, and only the problems that could test it are walked.

Which problems could: a problem tests a definition only through names written
in it (in its checks, its ``<!-- tests: ... -->`` comments, its own
definitions), each naming the definition itself or a definition whose
statement names it, and so on; and a reference's span is its name as written
(the lexer's token).  So searching the draft's text for the definition's
name, then for the names of the statements each place found lies in, gives
every problem that may test it, and a few more (a name in prose, in a longer
word): those are walked exactly as the whole draft's walk would, and those
that do not reach the definition drop out.  A name written in too many places,
or used by too many definitions, is left to the whole draft's walk.
"""

from __future__ import annotations

import re

from scaling_core.document.lookup import SpanIndex, bindings_index, checks_index, values_index
from scaling_core.document.results import Binding, DocumentAnalysis, ProblemResult, ValueResult
from scaling_core.expr.lexer import NAME_CONTINUES
from scaling_core.queries.coverage_graph import FileGraph, Node, binding_node
from scaling_core.queries.coverage_model import ProblemRef
from scaling_core.queries.coverage_walk import Edges, cover_problem

#: What continues a name: a reference is the longest name the lexer reads from where it starts.
_CONTINUES = re.compile(NAME_CONTINUES)
#: Past this many names (the definition and those built from it, directly or not), the whole walk is cheaper.
MOST_NAMES = 24
#: Past this many places where one of those names is written (in prose, in longer names or not), likewise.
MOST_PLACES = 2000


def problems_testing(analysis: DocumentAnalysis, binding: Binding) -> list[tuple[ProblemRef, bool]] | None:
    """The draft's own problems that test ``binding``, each with whether a passing check (or a declaration)
    reaches it, in the order of the problems: what the whole draft's walk gives for its node.

    None when its name, or the names built from it, are written in too many places to be worth it.
    """
    if not analysis.problems:  # nothing to search for
        return []
    problems = problems_naming(analysis, binding)
    if problems is None:
        return None
    if not problems:
        return []
    graph = FileGraph(analysis, windowed=True)
    edges = Edges((graph,))
    checks = checks_index(analysis)
    covering: dict[Node, list[tuple[ProblemRef, bool]]] = {}
    notes: list[tuple[int, str]] = []
    for problem in problems:
        counted = [check for check in checks.starting_between(*problem.span) if graph.counts(check)]
        cover_problem(graph, problem, counted, edges, covering, notes)
    return covering.get(binding_node(binding), [])


def problems_naming(analysis: DocumentAnalysis, binding: Binding) -> list[ProblemResult] | None:
    """The problems whose text names ``binding``, or a definition whose statement names it, and so on, in
    order: every problem that may test it (see the module).  None past :data:`MOST_NAMES` names or
    :data:`MOST_PLACES` places."""
    text, path, index = analysis.text, analysis.path, analysis.index
    values, bindings = values_index(analysis), bindings_index(analysis)
    names, waiting = {binding.name}, [binding.name]
    found: dict[int, ProblemResult] = {}
    places = 0
    while waiting:
        name = waiting.pop()
        offset = text.find(name)
        while offset >= 0:
            places += 1
            if places > MOST_PLACES:
                return None
            if _CONTINUES.match(text, offset + len(name)) is None:  # the whole name, not the start of a longer one
                problem = analysis.problem_at(offset)
                if problem is not None:  # its own definitions are visible in it alone: no further
                    found[problem.span.start] = problem
                else:
                    for user in _statements_holding(values, bindings, index.line_start_at(offset), offset, path):
                        if user not in names:
                            names.add(user)
                            waiting.append(user)
                    if len(names) > MOST_NAMES:
                        return None
            offset = text.find(name, offset + 1)
    return [found[start] for start in sorted(found)]


def _statements_holding(
    values: SpanIndex[ValueResult], bindings: SpanIndex[Binding], line_start: int, offset: int, path: str
) -> set[str]:
    """The names of the definitions whose statements may hold a reference at ``offset``: a named value
    holding it (a statement's span), a definition on its line before it (a statement kept to its line)."""
    users = set()
    for value in values.holding(offset):
        if value.name is not None:
            users.add(value.name)
            users.update(b.name for b in bindings.starting_between(value.span.start, value.span.start + 1))
    users.update(b.name for b in bindings.starting_between(line_start, offset + 1) if b.path == path)
    return users
