"""Imports: found before a draft is evaluated, analysed deepest first, and shared by every importer.

An imported draft is analysed before the draft importing it is evaluated:
:func:`imports_in` finds the drafts a text imports without evaluating it, so
the analysis (``analysis.py``) walks a chain of imports of any depth with an
explicit stack, deepest draft first, never recursing once per draft.

In the language server, 200 open drafts importing one root each analyse
that root when they are analysed; with an :class:`ImportMemo` (kept by the
server across analyses, passed in ``ImportContext.memo``) the root is
analysed once per version of what it reads.  An entry is reused only when
its analysis cannot differ from a fresh one: the same settings, the same
text, every ``import`` it (and what it imports) made resolving to the same
file with the same text, and no draft it reads on the importer's chain
(that would be a cycle, N007).  An open draft's own analysis is kept there
too (``ImportContext.share``), so an edit at the root of a chain of open
drafts analyses each draft once; and while the loader's answers cannot
change (between two edits), an entry found valid is not checked import by
import again.  What an entry read is a :class:`Reads`: its own imports and
the :class:`Reads` below, so keeping one copies no edge of the drafts below
(only the set of paths read, for cycles and for the server's dependents).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import field
from functools import cached_property
from operator import itemgetter

from scaling_core.document.extract import all_regions, extract
from scaling_core.document.regions import CalcRegion
from scaling_core.document.results import DocumentAnalysis
from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize_lines
from scaling_core.expr.parser import parse_statements
from scaling_core.records import record
from scaling_core.text import LineIndex
from scaling_core.units.registry import default_registry

#: An ``import`` met: (importing path, target as written, resolved path, its text); ("", "") when not found.
Edge = tuple[str, str, str, str]


@record(eq=False)
class Reads:
    """What one analysis read through imports: its own ``import`` edges, and for each draft it
    imported, what that one read (not every nested edge copied again)."""

    items: tuple[Edge | Reads, ...]
    #: Every draft read (resolved paths), nested ones too.
    paths: frozenset[str] = field(init=False)
    #: Whether an ``import`` met, nested ones too, was not found.
    missed: bool = field(init=False)

    def __post_init__(self) -> None:
        own: list[Edge] = []
        below: list[Reads] = []
        for item in self.items:
            (own if isinstance(item, tuple) else below).append(item)  # type: ignore[arg-type]
        object.__setattr__(
            self, "paths", (frozenset(map(itemgetter(2), own)) - _NOT_FOUND).union(*[r.paths for r in below])
        )
        object.__setattr__(self, "missed", not all(map(itemgetter(2), own)) or any(r.missed for r in below))

    @cached_property
    def edges(self) -> tuple[Edge, ...]:
        """Every ``import`` met, nested ones too, each once, in order (walked without recursion)."""
        edges: dict[Edge, None] = {}
        seen: set[int] = set()
        pending = [iter(self.items)]
        while pending:
            item = next(pending[-1], None)
            if item is None:
                pending.pop()
            elif isinstance(item, tuple):
                edges[item] = None
            elif id(item) not in seen:
                seen.add(id(item))
                if "edges" in item.__dict__:  # walked already
                    edges.update(dict.fromkeys(item.edges))
                else:
                    pending.append(iter(item.items))
        return tuple(edges)


_NOT_FOUND = frozenset(("",))


@record
class SharedImport:
    """One imported draft's analysis and what it read."""

    text: str
    config: object
    analysis: DocumentAnalysis
    reads: Reads


class ImportMemo:
    """Analyses of imported drafts, by resolved path (the most recently used :data:`SIZE`)."""

    SIZE = 256

    def __init__(self) -> None:
        self._entries: OrderedDict[str, SharedImport] = OrderedDict()
        self.analysed = 0
        self.shared = 0

    def get(
        self,
        target: str,
        text: str,
        config: object,
        stack: list[str],
        load: Callable[[str, str], tuple[str, str] | None],
        checked: dict[str, SharedImport] | None = None,
    ) -> SharedImport | None:
        """The shared analysis of ``target`` (with ``text``) for an importer whose chain is ``stack``.

        ``load`` resolves an import as the analysis under way would.  ``checked``
        holds the entries already found to read what ``load`` answers, when its
        answers cannot change meanwhile (the server's, between two edits): such an
        entry is not checked import by import again, only against ``stack``.
        """
        entry = self._entries.get(target)
        if entry is None or entry.config != config or entry.text != text:
            return None
        if checked is not None and checked.get(target) is entry:
            if not entry.reads.paths.isdisjoint(stack):
                return None
        else:
            chain = set(stack)
            for importer, written, resolved, read in entry.reads.edges:
                found = load(importer, written)
                if resolved in chain or (found != (resolved, read) if resolved else found is not None):
                    return None
            if checked is not None:
                checked[target] = entry
        self._entries.move_to_end(target)
        self.shared += 1
        return entry

    def put(self, target: str, entry: SharedImport, checked: dict[str, SharedImport] | None = None) -> None:
        """Keep ``entry`` for ``target``, unless its analysis met a cycle (its verdict depends on the chain).

        With ``checked`` (as for :meth:`get`), ``entry`` was made from its answers: it is recorded there.
        """
        if any(d.code == "N007" for d in entry.analysis.diagnostics):
            return
        if checked is not None:
            checked[target] = entry
        self.analysed += 1
        self._entries[target] = entry
        self._entries.move_to_end(target)
        while len(self._entries) > self.SIZE:
            self._entries.popitem(last=False)


def imports_in(text: str) -> list[str]:
    """The drafts ``text`` imports, as written, in the order its calc blocks give them (nothing evaluated)."""
    if "import" not in text:
        return []
    registry = default_registry()
    written: list[str] = []
    for region in all_regions(extract(text, LineIndex(text))):
        if isinstance(region, CalcRegion) and any("import" in line for _, line in region.lines):
            tokens, _problems = tokenize_lines(text, region.lines, region.span.end)
            statements, _errors = parse_statements(tokens, registry.__contains__)
            written += [statement.path for statement in statements if isinstance(statement, ast.Import)]
    return written
