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
(that would be a cycle, N007).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from scaling_core.document.extract import all_regions, extract
from scaling_core.document.regions import CalcRegion
from scaling_core.document.results import DocumentAnalysis
from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize_lines
from scaling_core.expr.parser import parse_statements
from scaling_core.text import LineIndex
from scaling_core.units.registry import default_registry

#: An ``import`` met: (importing path, target as written, resolved path, its text); ("", "") when not found.
Edge = tuple[str, str, str, str]


@dataclass(frozen=True)
class SharedImport:
    """One imported draft's analysis and what it read."""

    text: str
    config: object
    analysis: DocumentAnalysis
    #: Every ``import`` its analysis met, nested ones too.
    edges: tuple[Edge, ...]


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
    ) -> SharedImport | None:
        """The shared analysis of ``target`` (with ``text``) for an importer whose chain is ``stack``.

        ``load`` resolves an import as the analysis under way would.
        """
        entry = self._entries.get(target)
        if entry is None or entry.config != config or entry.text != text:
            return None
        chain = set(stack)
        for importer, written, resolved, read in entry.edges:
            found = load(importer, written)
            if resolved in chain or (found != (resolved, read) if resolved else found is not None):
                return None
        self._entries.move_to_end(target)
        self.shared += 1
        return entry

    def put(self, target: str, entry: SharedImport) -> None:
        """Keep ``entry`` for ``target``, unless its analysis met a cycle (its verdict depends on the chain)."""
        if any(d.code == "N007" for d in entry.analysis.diagnostics):
            return
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
