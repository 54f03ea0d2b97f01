"""Name completion from the per-analysis index gives the items, in the order, of a scan of every name."""

from __future__ import annotations

from bench.corpus import book_like
from bench.shapes import forward, giant
from scaling_core import DocumentAnalysis, analyze_document
from scaling_core.document.incremental import RegionCache
from scaling_core.expr.functions import FUNCTIONS
from scaling_core.formulas import LIBRARY
from scaling_core.queries.assist import completions
from scaling_core.queries.completion import LIMIT, Completion, name_completions, name_index
from scaling_core.xla_calls import DOCS as TRUSTED_DOCS
from scaling_core.xla_calls import SIGNATURES
from tests.core.test_lookup import PROBLEMS


def scanned(analysis: DocumentAnalysis, offset: int, prefix: str) -> list[Completion]:
    """The list as completion built it before the index (the specification)."""
    items: dict[str, Completion] = {}
    for binding in analysis.bindings:
        if binding.span.start < offset:
            items[binding.name] = Completion(binding.name, "variable", binding.source)
    for name, binding in analysis.exports.items():
        items.setdefault(name, Completion(name, "variable", binding.source))
    for name, record in analysis.records.items():
        items.setdefault(name, Completion(name, "chip", record.title))
    for name, (_low, _high, doc, _impl) in FUNCTIONS.items():
        items.setdefault(name, Completion(name, "function", doc))
    for name, formula in LIBRARY.items():
        items.setdefault(name, Completion(name, "function", formula.signature, f"{formula.doc}\n\n{formula.source}"))
    for name, doc in TRUSTED_DOCS.items():
        items.setdefault(name, Completion(name, "function", SIGNATURES[name], doc))
    return [item for item in items.values() if item.label.startswith(prefix)]


def test_names_offered_at_each_offset_are_those_of_a_scan() -> None:
    for text in (book_like(200), PROBLEMS, forward(200), giant(300, 150)):
        analysis = analyze_document(text, "x.md")
        for offset in range(0, len(text) + 1, max(1, len(text) // 150)):
            for prefix in ("", "t", "t_1", "B", "fl", "x", "zz", "h1"):
                assert name_completions(analysis, offset, prefix, None) == scanned(analysis, offset, prefix)


def test_names_listed_out_of_document_order_are_offered_as_a_scan_offers_them() -> None:
    analysis = analyze_document(PROBLEMS, "x.md")
    analysis.bindings = list(reversed(analysis.bindings))  # as if a definition were listed after a later one
    for offset in range(0, len(PROBLEMS) + 1, 7):
        assert name_completions(analysis, offset, "", None) == scanned(analysis, offset, "")


def test_a_long_list_is_cut_and_says_so() -> None:
    text = giant(3_000, 2_000)
    analysis = analyze_document(text, "x.md")
    offset = text.index("flops_400 = ")
    full = scanned(analysis, offset, "")
    cut = completions(analysis, offset, LIMIT)
    assert len(full) > LIMIT + 1 and cut == full[: LIMIT + 1]  # one more than the limit: the list is cut
    typed = completions(analysis, offset + 2, LIMIT)  # "fl" typed: the flops_* names first
    assert typed == scanned(analysis, offset + 2, "fl")[: LIMIT + 1]


def test_a_version_that_renames_nothing_reuses_the_names_order_and_offers_what_a_scan_offers() -> None:
    text = book_like(300)
    cache = RegionCache()
    first = analyze_document(text, "x.md", cache=cache)
    edited = "Some prose typed at the top.\n\n" + text  # every definition moves; no name changes
    second = analyze_document(edited, "x.md", cache=cache)
    assert name_index(second).order is name_index(first).order  # built once: the same names in the same order
    for offset in range(0, len(edited) + 1, max(1, len(edited) // 60)):
        for prefix in ("", "t", "B_", "x"):
            assert name_completions(second, offset, prefix, None) == scanned(second, offset, prefix)
    renamed = analyze_document(edited.replace("B_0 = 64", "B_zero = 64", 1), "x.md", cache=cache)
    assert name_index(renamed).order is not name_index(second).order
    offset = len(edited) // 2
    assert name_completions(renamed, offset, "B", None) == scanned(renamed, offset, "B")
