"""Definitions, references, renames and document symbols."""

from __future__ import annotations

import re

from scaling_core.document.lookup import bindings_index, references_index
from scaling_core.document.results import Binding, DocumentAnalysis
from scaling_core.records import record
from scaling_core.text import Span

_NAME = re.compile(r"[^\W\d]\w*\Z")


@record
class Symbol:
    """A document symbol: a problem (with its definitions inside) or a definition."""

    name: str
    detail: str
    kind: str  # "problem" or "definition"
    span: Span
    selection: Span
    children: tuple[Symbol, ...] = ()


def _same(a: Binding, b: Binding) -> bool:
    return a.path == b.path and a.span == b.span


def binding_at(analysis: DocumentAnalysis, offset: int) -> Binding | None:
    """The definition named at ``offset``: on a definition's name or on a use of it."""
    binding = bindings_index(analysis).first_holding(offset)
    if binding is not None:
        return binding
    reference = references_index(analysis).first_holding(offset)
    return reference.binding if reference is not None else None


def references_to(analysis: DocumentAnalysis, target: Binding, *, include_definition: bool = True) -> list[Span]:
    """Spans in this document that name ``target`` (its definition first, if here)."""
    spans = [b.span for b in analysis.bindings if include_definition and _same(b, target)]
    spans += [r.span for r in analysis.references if r.binding is not None and _same(r.binding, target)]
    return spans


def is_valid_name(name: str) -> bool:
    """Whether ``name`` can be a calc-language name."""
    return bool(_NAME.match(name)) and name != "import"


def document_symbols(analysis: DocumentAnalysis) -> list[Symbol]:
    """Problems (containing their definitions) and top-level definitions, in order."""
    symbols: list[Symbol] = []
    inside: dict[int, list[Symbol]] = {id(problem): [] for problem in analysis.problems}
    for binding in analysis.bindings:
        symbol = Symbol(binding.name, binding.source, "definition", binding.span, binding.span)
        owner = analysis.problem_at(binding.start)
        if owner is None:
            symbols.append(symbol)
        else:
            inside[id(owner)].append(symbol)
    for problem in analysis.problems:
        detail = f"{problem.status}: {problem.passed}/{problem.total} checks pass"
        symbols.append(Symbol(f"{problem.ident}: {problem.title}" if problem.title != problem.ident else problem.ident,
                              detail, "problem", problem.span, problem.title_span, tuple(inside[id(problem)])))  # fmt: skip
    symbols.sort(key=lambda s: s.span.start)
    return symbols
