"""What one analysis and the analyses of the drafts it imports share: :class:`ImportContext`.

The loader's answers (each ``import`` resolved once), the analyses made so
far, the chain of importers (for cycles, N007), and in the language server
the :class:`~scaling_core.document.imports.ImportMemo` that keeps imported
drafts' analyses from one analysis to the next.  ``analysis.py`` walks the
imports; this module reads and keeps what they give.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from scaling_core.config import Config
from scaling_core.document.imports import Edge, ImportMemo, Reads, SharedImport
from scaling_core.document.results import DocumentAnalysis
from scaling_core.expr.values import Budget
from scaling_core.external import TrustedCode
from scaling_core.measured import MeasurementSource

#: Resolves ``import "target"`` from the importing path: (resolved path, text) or None.
SourceLoader = Callable[[str, str], "tuple[str, str] | None"]


@dataclass
class ImportContext:
    """Shared across one analysis and the analyses of what it imports."""

    loader: SourceLoader | None = None
    cache: dict[str, DocumentAnalysis] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)
    #: Runs ```` ```python calc ```` blocks elsewhere when ``config.trust`` (None: they are not run).
    trusted: TrustedCode | None = None
    #: What the analysis under way, with what it imports, has spent of its limits (None between analyses).
    budget: Budget | None = None
    #: Answers ``measure_*`` calls from the measurement cache (None: they are untested).
    measurements: MeasurementSource | None = None
    #: Imported drafts' analyses kept across analyses (the language server's; ``imports.py``).
    memo: ImportMemo | None = None
    #: Every ``import`` met, nested ones too: (importing path, target as written, resolved path, text).
    #: (Nested ones as what the draft imported read, :class:`Reads`: its edges are not copied again.)
    edges: list[Edge | Reads] = field(default_factory=list)
    #: Every ``import`` each analysed draft met, nested ones too (by resolved path, as ``cache``).
    reads: dict[str, Reads] = field(default_factory=dict)
    #: What ``loader`` answered, by (importing path, target as written): each import is read once.
    loaded: dict[tuple[str, str], tuple[str, str] | None] = field(default_factory=dict)
    #: Keep the analysis asked for in ``memo`` too, as its importers' analysis of it would be (the
    #: language server, for an open draft others import: analysed once per version, not once more by them).
    share: bool = False
    #: The ``memo`` entries known to read what ``loaded`` answers (a caller keeping ``loaded`` across
    #: analyses while the loader's answers cannot change keeps this with it; None: checked each time).
    checked: dict[str, SharedImport] | None = None

    @property
    def imported(self) -> frozenset[str]:
        """Every draft read through an ``import``, nested ones too (resolved paths)."""
        return self.read().paths

    def read(self) -> Reads:
        """What was read through imports, nested ones too: the drafts (``paths``), and whether one was not found."""
        return Reads(tuple(self.edges))


def load_import(context: ImportContext, importer: str, written: str) -> tuple[str, str] | None:
    """What the loader gives for ``import "written"`` in ``importer`` (asked once per analysis)."""
    key = (importer, written)
    if key not in context.loaded:
        context.loaded[key] = context.loader(importer, written) if context.loader is not None else None
    return context.loaded[key]


def shared_import(target: str, text: str, config: Config, context: ImportContext) -> bool:
    """Whether ``context.memo`` had a valid analysis of ``target`` (now in ``context.cache``)."""
    if context.memo is None or context.loader is None:
        return False
    shared = context.memo.get(target, text, config, context.stack, partial(load_import, context), context.checked)
    if shared is None:
        return False
    context.cache[target], context.reads[target] = shared.analysis, shared.reads
    return True


def keep_import(target: str, text: str, config: Config, context: ImportContext, analysis: DocumentAnalysis,
                mark: int) -> None:  # fmt: skip
    """Keep the analysis of an imported draft, which met ``context.edges[mark:]``, in ``context.cache`` and the memo."""
    reads = Reads(tuple(dict.fromkeys(context.edges[mark:])))
    del context.edges[mark:]
    context.cache[target], context.reads[target] = analysis, reads  # its importer reads what it read too
    stopped = context.budget is not None and context.budget.stopped
    if context.memo is not None and not stopped:
        context.memo.put(target, SharedImport(text, config, analysis, reads), context.checked)


def share_analysis(analysis: DocumentAnalysis, text: str, config: Config, context: ImportContext) -> None:
    """Keep the analysis asked for (``context.share``) in ``context.memo`` for the drafts importing it.

    What its importers use of it (exports and diagnostics) is what their own
    analysis of it gives: the same text, settings and imports; its
    definitions only lose the fingerprints the region cache stamped on them.
    Not kept when the time budget stopped it (:func:`keep_import` neither).
    """
    if context.memo is None or context.loader is None or (context.budget is not None and context.budget.stopped):
        return
    exports = analysis.exports
    stamped = [binding for binding in analysis.bindings
               if binding.fingerprint is not None and binding.written and exports.get(binding.name) is binding]  # fmt: skip
    if stamped:  # its own definitions, as an analysis without a region cache makes them (``interpret.py``)
        exports = dict(exports)
        for binding in stamped:
            exports[binding.name] = replace(binding, fingerprint=None)
    shared = replace(analysis, exports=exports, lookups={})
    entry = SharedImport(text, config, shared, Reads(tuple(dict.fromkeys(context.edges))))
    context.memo.put(analysis.path, entry, context.checked)
