"""Indexes an editor's queries read an analysis through: what holds an offset, what a name means there.

Hover, inlay hints, completion and go-to-definition each ask one question
about one analysis, many times while the author reads: the value or check at
the cursor, the definitions visible there.  Scanning every value, check and
definition per question cost ~10-50 ms on a 10,000-line draft (a 5,000-statement
block: 4,000 definitions, 8,000 references), past the editor's 10 ms.  Each
index here is built once per analysis (kept in ``DocumentAnalysis.lookups``)
and answers in O(log n) plus what it returns, with the same answer the scan gave.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from scaling_core.document.results import Binding, CheckResult, DocumentAnalysis, Reference, ValueResult
from scaling_core.text import Span

#: Spans longer than this are few (a whole problem, a long block's value): they are scanned, not indexed.
WIDE = 4096


class _Spanned(Protocol):
    @property
    def span(self) -> Span: ...


_T = TypeVar("_T", bound=_Spanned)


class SpanIndex(Generic[_T]):
    """Items (in their list's order) by where their spans start and end."""

    __slots__ = ("items", "_starts", "_by_start", "_ends", "_by_end", "_wide")

    def __init__(self, items: Sequence[_T]) -> None:
        self.items: list[_T] = list(items)
        starts = [item.span.start for item in self.items]
        ends = [item.span.end for item in self.items]
        narrow = [n for n, (start, end) in enumerate(zip(starts, ends)) if end - start <= WIDE]
        self._wide = [n for n, (start, end) in enumerate(zip(starts, ends)) if end - start > WIDE]
        # Sorting keys read from lists (a method written in C, not a Python function per item): ~3x faster to
        # build on 10,000 lines, and each analysis in an editor builds its indexes anew.
        self._by_start = sorted(narrow, key=starts.__getitem__)
        self._starts = [starts[n] for n in self._by_start]
        self._by_end = sorted(range(len(ends)), key=ends.__getitem__)
        self._ends = [ends[n] for n in self._by_end]

    def first_holding(self, offset: int, accept: Callable[[_T], bool] | None = None) -> _T | None:
        """The first item, in list order, whose span holds ``offset`` (end included) and that ``accept`` takes."""
        items = self.items
        low = bisect.bisect_left(self._starts, offset - WIDE)
        high = bisect.bisect_right(self._starts, offset)
        found = [n for n in self._by_start[low:high] if items[n].span.end >= offset]
        found += [n for n in self._wide if items[n].span.start <= offset <= items[n].span.end]
        for n in sorted(found):
            if accept is None or accept(items[n]):
                return items[n]
        return None

    def starting_between(self, low: int, high: int) -> list[_T]:
        """Every item whose span starts in ``[low, high)``, in list order."""
        items = self.items
        found = self._by_start[bisect.bisect_left(self._starts, low) : bisect.bisect_left(self._starts, high)]
        found += [n for n in self._wide if low <= items[n].span.start < high]
        return [items[n] for n in sorted(found)]

    def ending_between(self, start: int, end: int) -> list[_T]:
        """Every item whose span ends in ``[start, end]``, in list order."""
        low = bisect.bisect_left(self._ends, start)
        high = bisect.bisect_right(self._ends, end)
        return [self.items[n] for n in sorted(self._by_end[low:high])]


def once_per_analysis(analysis: DocumentAnalysis, name: str, build: Callable[[DocumentAnalysis], object]) -> object:
    """``build(analysis)``, once per analysis (two threads racing build it twice and keep one)."""
    found = analysis.lookups.get(name)
    if found is None:
        found = analysis.lookups[name] = build(analysis)
    return found


def values_index(analysis: DocumentAnalysis) -> SpanIndex[ValueResult]:
    """The analysis's values by span."""
    return once_per_analysis(analysis, "values", lambda a: SpanIndex(a.values))  # type: ignore[return-value]


def checks_index(analysis: DocumentAnalysis) -> SpanIndex[CheckResult]:
    """The analysis's checks by span."""
    return once_per_analysis(analysis, "checks", lambda a: SpanIndex(a.checks))  # type: ignore[return-value]


def bindings_index(analysis: DocumentAnalysis) -> SpanIndex[Binding]:
    """The analysis's definitions by span (the name defined)."""
    return once_per_analysis(analysis, "bindings", lambda a: SpanIndex(a.bindings))  # type: ignore[return-value]


def references_index(analysis: DocumentAnalysis) -> SpanIndex[Reference]:
    """The analysis's resolved uses of names by span."""
    return once_per_analysis(analysis, "references", lambda a: SpanIndex(a.references))  # type: ignore[return-value]


def definitions_by_name(analysis: DocumentAnalysis) -> dict[str, list[Binding]]:
    """Every definition of each name, in the order of ``analysis.bindings``."""

    def build(a: DocumentAnalysis) -> dict[str, list[Binding]]:
        found: dict[str, list[Binding]] = {}
        for binding in a.bindings:
            found.setdefault(binding.name, []).append(binding)
        return found

    return once_per_analysis(analysis, "by_name", build)  # type: ignore[return-value]


def named_values(analysis: DocumentAnalysis) -> dict[int, ValueResult]:
    """The values of definitions by where they start (the last one, in list order, at each start)."""
    return once_per_analysis(analysis, "named", lambda a: {v.span.start: v for v in a.values if v.name is not None})  # type: ignore[return-value]


class VisibleScope(Mapping[str, Binding]):
    """The definitions visible at ``start``: the last one (in ``bindings`` order) of each name defined
    before it, at the top level or in the problem holding ``start``; imported names under them;
    ``overrides`` over all (how the analysis resolved the names of one expression).

    Looked up per name (the scan it replaces built the whole dict per hover).
    """

    def __init__(self, analysis: DocumentAnalysis, start: int, overrides: Mapping[str, Binding]) -> None:
        self._analysis, self._start, self._overrides = analysis, start, overrides
        self._problem = analysis.problem_at(start)
        self._by_name = definitions_by_name(analysis)

    def _find(self, name: str) -> Binding | None:
        found = self._overrides.get(name)
        if found is not None:
            return found
        analysis = self._analysis
        for binding in reversed(self._by_name.get(name, ())):
            if binding.span.start < self._start:
                inside = analysis.problem_at(binding.span.start)
                if inside is None or inside is self._problem:
                    return binding
        imported = analysis.exports.get(name)
        return imported if imported is not None and imported.path != analysis.path else None

    def __getitem__(self, name: str) -> Binding:
        found = self._find(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def _names(self) -> list[str]:
        names = dict.fromkeys(n for n, b in self._analysis.exports.items() if b.path != self._analysis.path)
        names.update(dict.fromkeys(self._by_name))
        names.update(dict.fromkeys(self._overrides))
        return [name for name in names if self._find(name) is not None]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())
