"""The engine never crashes, hangs or grows without bound: each input here once did (issue 11)."""

from __future__ import annotations

import itertools
import time
import tracemalloc
from collections.abc import Callable

import pytest

from scaling_core import Config, analyze_document, config_from_mapping
from scaling_core.document import analysis as analysis_module
from scaling_core.document.analysis import ImportContext
from scaling_core.document.imports import ImportMemo
from scaling_core.document.incremental import RegionCache
from scaling_core.expr import values as values_module
from scaling_core.prelude import CALLABLES
from tests.conftest import analyze, codes
from tests.core.test_incremental import observable


def calc(*lines: str) -> str:
    return "```calc\n" + "\n".join(lines) + "\n```\n"


def no_internal_errors(text: str, **config: object) -> list[str]:
    """Analyse ``text``: no exception, no E999; the codes reported."""
    analysis = analyze(text, **config)
    assert "E999" not in codes(analysis), [d.message for d in analysis.diagnostics]
    return codes(analysis)


# -- one-line inputs that raised Python exceptions ------------------------------------------
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("0 ** -1", ["E001"]),
        ("(0 s) ** -1", ["E001"]),
        ("(-0.0) ** -2", ["E001"]),
        ("0 ** -0.5", ["E001"]),
        ("(2 s) ** 2.5", ["U006"]),
        ("(2 s) ** 0.4", ["U006"]),
        ("(2 s) ** 1e-30", ["U006"]),
        ("(4 s**2) ** 0.5 == 2 s", []),
        ("(8 s**3) ** (1/3) ≈ 2 s", []),
        ("min(range(0))", ["E004"]),
        ("max(range(5, 1))", ["E004"]),
        ("sum(range(0))", ["E004"]),
        ("max([1, 2], [1, 2, 3])", ["E005"]),
        ("[1, 2] == [1, 2, 3]", ["E005"]),
        ("[1, 2] < [1, 2, 3]", ["E005"]),
        ("[1, 2] ≈ 3 ± [1, 2, 3]", ["E005"]),
        ("2" + "⁹" * 400, ["E002"]),
        ("2" + "⁹" * 5000, ["E002"]),
        ("2 s" + "⁹" * 400, ["E003"]),
        ("2 s" + "⁹" * 5000, ["E003"]),
        ("(2 s)" + "⁹" * 30, ["E003"]),
        ("2" + "**2" * 2000, ["E003"]),
        ("2 ** " + "-" * 2000 + "2", ["E003"]),
    ],
)
def test_arithmetic_edge_cases_are_diagnostics(line: str, expected: list[str]) -> None:
    assert no_internal_errors(calc(line)) == expected


def test_an_empty_sweep_is_a_diagnostic_never_a_pass() -> None:
    text = calc("x = range(5, 1)", "range(0) == 1", "range(0) < 2") + "5 ms<!-- = range(0) ms -->\n"
    analysis = analyze(text)
    assert codes(analysis) == ["E004"] * 4
    assert [c.status for c in analysis.checks] == ["skip"] * 3


def test_sweeps_of_different_lengths_in_a_claim_are_e005() -> None:
    text = calc("x = [1, 2]", "y = [1, 2, 3] ms") + "3 ms<!-- = x * y -->\n"
    assert no_internal_errors(text) == ["E005"]


def test_extreme_values_are_restyled_without_crashing() -> None:
    text = calc("x = 1e308 s", "y = 5e-324 s") + "About 3 ms<!-- = x -->, or 2e-300 ms<!-- = y -->.\n"
    analysis = analyze(text)
    assert codes(analysis) == ["C001"] and [c.status for c in analysis.checks] == ["fail", "pass"]
    assert analysis.diagnostics[0].fixes == ()  # 1e311 ms is not a number to write


@pytest.mark.parametrize("terms", [400, 5000])
def test_long_flat_sums_and_products_evaluate(terms: int) -> None:
    ones = ["1"] * terms
    text = calc("x = " + " + ".join(ones), "y = " + " * ".join(ones), f"x == {terms}", "1 == " + "*".join(ones))
    text += "`" + "+".join(ones) + f" = {terms}` and `3 * ms = 3 " + " * ".join(["ms"] * terms) + "`\n"
    analysis = analyze(text)
    assert codes(analysis) == ["E003"]  # ms to the power 400: beyond the unit exponent limit
    assert [c.status for c in analysis.checks] == ["pass", "pass", "pass"]


def _chain(length: int) -> tuple[Callable[[int], str], Callable[[str, str], tuple[str, str]]]:
    """Drafts f0.md … f{length-1}.md, each importing the next; the last defines x = 7."""

    def text(number: int) -> str:
        if number == length - 1:
            return calc("x = 7")
        return calc(f'import "f{number + 1}.md"') + "It is 7<!-- = x -->.\n"

    def loader(_importer: str, target: str) -> tuple[str, str]:
        return target, text(int(target[1:-3]))

    return text, loader


def test_a_300_file_import_chain_reaches_the_first_file() -> None:
    # Imports nest to any depth: resolved deepest first, without recursion (150 files crashed once).
    text, loader = _chain(300)
    analysis = analyze_document(text(0), "f0.md", loader=loader)
    assert codes(analysis) == [] and [c.status for c in analysis.checks] == ["pass"]
    assert analysis.exports["x"].path == "f299.md"


def test_a_1000_file_import_chain_with_a_memo_analyses_each_file_once() -> None:
    text, loader = _chain(1000)
    reads: list[str] = []

    def counted(importer: str, target: str) -> tuple[str, str]:
        reads.append(target)
        return loader(importer, target)

    memo = ImportMemo()
    analysis = analyze_document(text(0), "f0.md", context=ImportContext(counted, memo=memo))
    assert codes(analysis) == [] and [c.status for c in analysis.checks] == ["pass"]
    assert memo.analysed == 999 and len(reads) == 999  # each file read and analysed once
    again = analyze_document(text(0), "f0.md", context=ImportContext(loader, memo=memo))
    assert memo.analysed == 999 and [c.status for c in again.checks] == ["pass"]


def test_a_cycle_at_the_end_of_a_long_chain_is_n007() -> None:
    text, loader = _chain(200)

    def cyclic(importer: str, target: str) -> tuple[str, str]:
        if target == "f199.md":
            return target, calc('import "f0.md"', "x = 7")
        return loader(importer, target)

    analysis = analyze_document(text(0), "f0.md", loader=cyclic)
    assert codes(analysis) == ["N007", "N001"]  # at the import, and the claim's x that it did not bring
    assert analysis.diagnostics[0].message.startswith("import cycle: f0.md -> f1.md -> f2.md")


# -- a bug anywhere in a statement is E999 at that statement ------------------------------
def test_an_exception_in_a_call_handler_is_e999_at_each_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ev: object, node: object) -> None:
        raise RuntimeError("crafted failure")

    monkeypatch.setitem(CALLABLES, "sqrt", broken)
    text = calc("a = 1", "b = sqrt(4)", "c = a + 1", "c == 2") + "Also `sqrt(4) = 2` and 2<!-- = sqrt(4) -->.\n"
    analysis = analyze(text)
    internal = [d for d in analysis.diagnostics if d.code == "E999"]
    assert len(internal) == 3 and codes(analysis) == ["E999", "E999", "E999"]
    assert all("internal error" in d.message and "please report" in d.message for d in internal)
    assert "RuntimeError: crafted failure" in internal[0].message
    assert [text[d.span.start : d.span.end] for d in internal] == ["b = sqrt(4)", "sqrt(4) = 2", "2"]
    assert [v.name for v in analysis.values] == ["a", "c"]
    assert [c.status for c in analysis.checks] == ["pass", "skip"]  # a code span that fails records no check


def test_an_exception_outside_statements_is_e999_for_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("crafted failure")

    monkeypatch.setattr(analysis_module, "extract", broken)
    analysis = analyze(calc("a = 1"))
    assert codes(analysis) == ["E999"] and "please report" in analysis.diagnostics[0].message


# -- resource bounds per document ----------------------------------------------------------
def test_a_list_of_many_large_sweeps_is_refused_before_it_is_built() -> None:
    text = calc("r = range(1e6)", "x = [" + ", ".join(["r"] * 300) + "]")
    tracemalloc.start()
    start = time.perf_counter()
    try:
        found = no_internal_errors(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == ["E003"]
    assert time.perf_counter() - start < 5
    assert peak < 200e6


def test_the_sweep_elements_of_one_analysis_are_bounded() -> None:
    # 20 × max_array_elements in all: here 200 elements.
    text = calc("r = range(10)", *[f"y{n} = r * 2" for n in range(30)], "z = 1 + 1")
    analysis = analyze(text, max_array_elements=10)
    assert codes(analysis) == ["E003"] * 11
    assert "sweep elements" in analysis.diagnostics[0].message
    assert [v.name for v in analysis.values][-1] == "z"


def test_many_large_sweep_definitions_are_bounded() -> None:
    text = calc(*[f"a{n} = range(1e6)" for n in range(40)])
    start = time.perf_counter()
    assert no_internal_errors(text) == ["E003"] * 20
    assert time.perf_counter() - start < 5


def test_the_element_budget_is_the_same_for_incremental_and_full_analysis() -> None:
    base = calc("r = range(10)", *[f"y{n} = r * {n}" for n in range(12)]) + "\n" + calc("q = r * 3")
    cache = RegionCache()
    analyze_document(base, "d.md", Config(max_array_elements=10), cache=cache)
    for edited in (base.replace("q = r * 3", "q = r * 4"), base.replace("y0 = r * 0", "y0 = 1"), base):
        config = Config(max_array_elements=10)
        incremental = analyze_document(edited, "d.md", config, cache=cache)
        assert observable(incremental) == observable(analyze_document(edited, "d.md", config))


def test_a_wall_time_budget_stops_the_analysis_with_e003(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = itertools.count()
    monkeypatch.setattr(values_module, "clock", lambda: float(next(ticks)))  # one second per look at the clock
    text = calc("a = 1", "b = 2") + "`2 * 3 = 6`\n"
    analysis = analyze(text, analysis_time_limit=0.5)
    assert codes(analysis) == ["E003"]
    assert "time" in analysis.diagnostics[0].message and analysis.checks == []


def test_book_style_problem_detection_is_linear() -> None:
    # 10,000 book-style problems between 10,000 explicit ones: each problem's end was found by scanning
    # every explicit problem (31 s); now by bisection.
    text = "# Problems\n\n" + "".join(
        f"**Question {n}:** a question.\n\n<!-- problem: e{n} -->\ntext\n<!-- /problem -->\n\n" for n in range(10000)
    )
    start = time.perf_counter()
    analysis = analyze(text)
    assert len(analysis.problems) == 20000
    assert time.perf_counter() - start < 10  # ~1.2 s


# -- the claim cache keys on what it evaluates ---------------------------------------------
def test_a_claim_masked_differently_is_not_taken_from_the_cache() -> None:
    # The backtick before 'see' pairs with the first one in the comment across a line break, so
    # the claim's expression is no longer masked: the same raw text evaluates differently.
    head = calc("t = 5 ms") + "\n"
    plain, ticked = head + "see\n5 ms<!-- = t `a` -->\n", head + "` see\n5 ms<!-- = t `a` -->\n"
    for first, second in ((plain, ticked), (ticked, plain)):
        cache = RegionCache()
        analyze_document(first, "d.md", cache=cache)
        assert observable(analyze_document(second, "d.md", cache=cache)) == observable(analyze_document(second, "d.md"))


def test_an_infinite_tolerance_is_e002_not_a_nan_window() -> None:
    assert no_internal_errors(calc("0 == 0 ± 1e400%", "1 == 2 ± 1e308%")) == ["E002"]


def test_time_spent_inside_an_import_is_reported_at_the_import(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = itertools.count()
    monkeypatch.setattr(values_module, "clock", lambda: float(next(ticks)))  # one second per look at the clock
    drafts = {
        "main.md": calc('import "other.md"', "z = 1") + "`2 * 3 = 6`\n",
        "other.md": calc("a = 1", "b = 2", "c = 3"),
    }
    analysis = analyze_document(drafts["main.md"], "main.md", Config(analysis_time_limit=3.5),
                                loader=lambda _importer, target: (target, drafts[target]))  # fmt: skip
    assert codes(analysis) == ["E003"] and analysis.diagnostics[0].span.start == drafts["main.md"].index('"other.md"')
    assert "analysis stopped here" in analysis.diagnostics[0].message
    assert analysis.values == [] and analysis.checks == []


# -- the budgets are settings ------------------------------------------------------------------
def test_max_total_elements_bounds_the_sweep_elements_of_one_analysis() -> None:
    text = calc("r = range(10)", *[f"y{n} = r * 2" for n in range(30)], "z = 1 + 1")
    analysis = analyze(text, max_array_elements=10, max_total_elements=50)  # r, then y0..y3: 50 elements
    assert codes(analysis) == ["E003"] * 26
    assert "of 50 sweep elements is spent (max_total_elements)" in analysis.diagnostics[0].message
    assert codes(analyze(text, max_array_elements=10, max_total_elements=310)) == []


def test_analysis_time_limit_is_read_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = itertools.count()
    monkeypatch.setattr(values_module, "clock", lambda: float(next(ticks)))  # one second per look at the clock
    text = calc(*[f"a{n} = {n}" for n in range(40)])
    assert codes(analyze(text, analysis_time_limit=1000.0)) == []
    config, problems = config_from_mapping({"analysis_time_limit": 2.5})
    assert problems == [] and config.analysis_time_limit == 2.5
    assert codes(analyze_document(text, "d.md", config)) == ["E003"]


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("analysis_time_limit", 0, "analysis_time_limit: must be a positive number of seconds"),
        ("analysis_time_limit", -1.5, "analysis_time_limit: must be a positive number of seconds"),
        ("analysis_time_limit", float("nan"), "analysis_time_limit: must be a positive number of seconds"),
        ("analysis_time_limit", True, "analysis_time_limit: must be a number of seconds"),
        ("analysis_time_limit", "20 s", "analysis_time_limit: must be a number of seconds"),
        ("max_total_elements", 0, "max_total_elements: must be a positive integer"),
        ("max_total_elements", 2.5, "max_total_elements: must be a positive integer"),
        ("max_total_elements", True, "max_total_elements: must be a positive integer"),
    ],
)
def test_bad_budget_settings_are_problems_not_exceptions(key: str, value: object, says: str) -> None:
    config, problems = config_from_mapping({key: value})
    assert problems == [says] and config == Config()
