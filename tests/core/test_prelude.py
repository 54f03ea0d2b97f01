"""The calc language's layers: values, constants, the prelude's call table, one did-you-mean."""

from __future__ import annotations

import pytest

from scaling_core import prelude
from scaling_core.expr.constant import evaluate_constant
from scaling_core.expr.evaluator import Evaluator
from scaling_core.expr.functions import FUNCTIONS
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_claim_expression
from scaling_core.expr.tokens import canonical_comparison
from scaling_core.expr.values import PROSE_CUTOFF, UNIT_AFTER_NUMBER_CUTOFF, EvaluationError, did_you_mean
from scaling_core.external import KINDS
from scaling_core.formulas import LIBRARY
from scaling_core.measure_calls import SIGNATURES as MEASURE_CALLS
from scaling_core.units.registry import default_registry
from tests.conftest import analyze, codes, run, statuses


def test_formula_call_star_import_works() -> None:
    namespace: dict[str, object] = {}
    exec("from scaling_core.formulas.call import *", namespace)
    assert {"FormulaCall", "call_formula", "expected_dim"} <= set(namespace)


def test_prelude_holds_every_builtin_then_every_formula_then_the_trusted_calls_then_measurements() -> None:
    assert set(prelude.CALLABLES) == set(FUNCTIONS) | set(LIBRARY) | set(KINDS) | set(MEASURE_CALLS)
    assert list(prelude.CALLABLES)[: len(FUNCTIONS)] == list(FUNCTIONS)
    trusted = [name for name in KINDS if name not in FUNCTIONS | LIBRARY.keys()]
    measured = [name for name in MEASURE_CALLS if name not in FUNCTIONS | LIBRARY.keys()]
    assert list(prelude.CALLABLES)[-len(KINDS) - len(MEASURE_CALLS) :] == trusted + measured


def test_an_evaluator_calls_only_what_its_caller_hands_it() -> None:
    registry = default_registry()
    tokens, _ = tokenize("max(2, 3) s")
    expr, _tolerance, _problem = parse_claim_expression(tokens, registry.__contains__)
    assert expr is not None
    seen = []

    def handler(ev: Evaluator, node: object) -> object:
        seen.append(node)
        return prelude.call(ev, node)  # type: ignore[arg-type]

    value = Evaluator(registry, lambda _name: None, list, handler).quantity(expr)  # type: ignore[arg-type]
    assert value.value == 3 and len(seen) == 1


@pytest.mark.parametrize(("text", "value"), [("197 TFLOP/s", 197e12), ("16 GiB", 16 * 2**30), ("2 * 8 GB/s", 16e9)])
def test_constants(text: str, value: float) -> None:
    quantity = evaluate_constant(text)
    assert quantity is not None and quantity.value == pytest.approx(value)


@pytest.mark.parametrize("text", ["x GB", "max(1, 2) GB", "h100.hbm", "1 +", "2 sceonds"])
def test_a_constant_has_no_names_and_no_calls(text: str) -> None:
    assert evaluate_constant(text) is None


def test_did_you_mean_takes_a_spelling_and_candidates() -> None:
    assert did_you_mean("hbm_bq", ["flops_bf16", "hbm", "hbm_bw"]) == "did you mean 'hbm_bw' or 'hbm'?"
    assert did_you_mean("qqq", ["hbm_bw"]) is None
    units = default_registry().spellings()
    assert did_you_mean("ways", units, cutoff=PROSE_CUTOFF) is None
    assert did_you_mean("sceonds", units, cutoff=PROSE_CUTOFF) == "did you mean 'seconds'?"
    assert UNIT_AFTER_NUMBER_CUTOFF < PROSE_CUTOFF


def test_every_unknown_spelling_gets_the_same_did_you_mean() -> None:
    for text, code in [
        ("tiem = 1\ntime", "N001"),
        ("1 s -> sceonds", "N002"),
        ("h100.hbm_bq", "N003"),
        ("cel(1)", "N004"),
    ]:
        result = run(text)
        assert codes(result) == [code]
        assert result.diagnostics[0].notes[0].startswith("did you mean '")


def test_unknown_function_without_near_miss_lists_the_builtins() -> None:
    (diagnostic,) = run("zzzzzz(1)").diagnostics
    assert diagnostic.notes == (f"functions: {', '.join(sorted(FUNCTIONS))}",)


def test_a_failed_call_is_an_evaluation_error_at_the_name() -> None:
    registry = default_registry()
    tokens, _ = tokenize("cel(1)")
    expr, _tolerance, _problem = parse_claim_expression(tokens, registry.__contains__)
    assert expr is not None
    with pytest.raises(EvaluationError) as failure:
        Evaluator(registry, lambda _name: None, list, prelude.call).value(expr)
    assert failure.value.diagnostic.code == "N004" and failure.value.diagnostic.span == (0, 3)


@pytest.mark.parametrize(
    ("written", "canonical"), [("~=", "≈"), ("<=", "≤"), (">=", "≥"), ("==", "=="), ("≈", "≈"), ("<", "<")]
)
def test_comparison_spellings_have_one_normal_form(written: str, canonical: str) -> None:
    assert canonical_comparison(written) == canonical


@pytest.mark.parametrize(("op", "status"), [(">=", "fail"), ("≥", "fail"), (">", "fail"), ("≤", "pass")])
def test_claim_comparisons_read_the_prose_number_first(op: str, status: str) -> None:
    # "5 s >= u" with u = 10 s is false whichever way the operator is spelt.
    analysis = analyze(f"```calc\nu = 10 s\n```\n\nIt takes 5 s<!-- {op} u -->.\n")
    assert statuses(analysis) == [status]
