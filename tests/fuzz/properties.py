"""What every analysis must satisfy, whatever the draft: the fuzzers' assertions.

* no exception escapes ``analyze_document`` and none was turned into E999
  (an internal error is a bug, even when contained);
* every span it reports lies within the text;
* the same input gives the same output;
* with a region cache, an incremental analysis equals a full one.
"""

from __future__ import annotations

import os
from pathlib import Path

from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.document.incremental import RegionCache
from scaling_core.expr.values import Record, ShapeValue
from scaling_core.units.arrays import is_array
from scaling_core.units.quantity import Quantity

#: Examples per property test: a short run by default (the CI), a long one by hand
#: (``MARGIN_HYPOTHESIS_EXAMPLES=100000``, as for the other property tests).
EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))


def examples(default: int) -> int:
    """The number of examples a fuzz test runs: ``default``, or the count asked for by hand."""
    return EXAMPLES or default


def value_key(value: object) -> object:
    """A value as data, comparable across analyses (records by name, not identity)."""
    if isinstance(value, Quantity):
        magnitude = value.value
        raw = tuple(float(v) for v in magnitude) if is_array(magnitude) else float(magnitude)
        return ("q", repr(raw), value.dim, value.free, value.label)
    if isinstance(value, Record):
        return ("record", value.name, value.title, tuple(sorted(value.fields)))
    if isinstance(value, ShapeValue):
        return ("shape", value.dtype, value.dims)
    return value


def summary(analysis: DocumentAnalysis) -> tuple[object, ...]:
    """Everything an analysis reports, as shown to an author (every display is built, as an editor builds it)."""
    return (
        [(d.code, d.span, d.message, d.severity, d.notes, d.related, d.fixes) for d in analysis.diagnostics],
        [(v.span, v.display, v.name, v.inline, value_key(v.quantity)) for v in analysis.values],
        [
            (c.kind, c.span, c.status, c.op, c.claim, c.computed_display, c.message, c.problem, repr(c.allowance))
            for c in analysis.checks
        ],
        list(analysis.problems),
        [(b.name, b.span, b.source, value_key(b.value)) for b in analysis.bindings],
        [(r.span, r.name, r.binding.span if r.binding else None) for r in analysis.references],
    )


def assert_spans_within(analysis: DocumentAnalysis, text: str) -> None:
    """Every span the analysis reports lies within ``text``."""
    size = len(text)
    for diagnostic in analysis.diagnostics:
        spans = [diagnostic.span, *(r.span for r in diagnostic.related), *(f.span for f in diagnostic.fixes)]
        for span in spans:
            assert 0 <= span.start <= span.end <= size, (diagnostic, size)
    for span in [*(v.span for v in analysis.values), *(c.span for c in analysis.checks)]:
        assert 0 <= span.start <= span.end <= size, (span, size)
    for problem in analysis.problems:
        assert 0 <= problem.span.start <= problem.span.end <= size, (problem, size)


def assert_no_internal_error(analysis: DocumentAnalysis, text: str) -> None:
    """No E999: a contained exception is still a bug to fix."""
    internal = [d.message for d in analysis.diagnostics if d.code == "E999"]
    assert not internal, (internal, text[:2000])


def assert_sound(text: str, config: Config | None = None, loader: object = None) -> DocumentAnalysis:
    """Analyse ``text`` twice: no exception, no E999, spans within the text, the same result both times."""
    first = analyze_document(text, "fuzz.md", config, loader=loader)  # type: ignore[arg-type]
    assert_no_internal_error(first, text)
    assert_spans_within(first, text)
    again = analyze_document(text, "fuzz.md", config, loader=loader)  # type: ignore[arg-type]
    assert summary(first) == summary(again), text[:2000]
    return first


def assert_incremental_equals_full(texts: list[str], config: Config | None = None, loader: object = None) -> None:
    """Analyse each version with one region cache, as the editor does: each equals a fresh full analysis."""
    cache = RegionCache()
    for text in texts:
        incremental = analyze_document(text, "fuzz.md", config, loader=loader, cache=cache)  # type: ignore[arg-type]
        full = analyze_document(text, "fuzz.md", config, loader=loader)  # type: ignore[arg-type]
        assert_no_internal_error(full, text)
        assert summary(incremental) == summary(full), text[:2000]


def corpus() -> dict[str, str]:
    """The drafts the mutation fuzzer starts from: examples/ and tests/realistic/, by path."""
    root = Path(__file__).resolve().parents[2]
    paths = sorted([*root.glob("examples/**/*.md"), *root.glob("tests/realistic/**/*.md")])
    return {str(path.relative_to(root)): path.read_text("utf-8") for path in paths}


def corpus_loader(drafts: dict[str, str]) -> object:
    """An import loader over ``drafts`` (paths relative to the repository): the root first, then the importer's folder."""

    def load(importer: str, target: str) -> tuple[str, str] | None:
        for candidate in (target, os.path.normpath(os.path.join(os.path.dirname(importer), target))):
            if candidate in drafts:
                return candidate, drafts[candidate]
        return None

    return load
