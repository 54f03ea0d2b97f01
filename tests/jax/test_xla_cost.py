"""xla_cost: XLA's lowered cost analysis on the CPU, loop-corrected, unknown where it cannot be trusted."""

from __future__ import annotations

import re

import pytest

from scaling_core import Severity
from scaling_core.external import JAX_DTYPES, Outcome, Program, Question, ShapeArg
from server.analysis.runner import AnalysisRunner
from tests.conftest import ROOT
from tests.jax.conftest import block, calc, needs_jax, trusted

pytestmark = needs_jax

FUNCTIONS = """
import jax
import jax.numpy as jnp

def matmul(x, w):
    return x @ w

def scan4(x, w):
    def step(carry, _):
        return carry @ w, None
    return jax.lax.scan(step, x, None, length=4)[0]

def loop(x, w):
    return jax.lax.fori_loop(0, 3, lambda i, carry: jnp.tanh(carry @ w), x)

def cholesky(a):
    return jnp.linalg.cholesky(a)

def until(x):
    return jax.lax.while_loop(lambda c: c.sum() < 100.0, lambda c: c * 2.0, x)
"""
B, D, F = 4096, 8192, 8192


def ask(
    runner: AnalysisRunner, function: str, *shapes: tuple[str, tuple[int, ...]]
) -> tuple[dict[str, float], dict[str, str]]:
    program = Program((FUNCTIONS.strip() + "\n",))
    report = runner.load(program)
    assert [c.outcome for c in report.cells] == [Outcome.OK], report
    answer = runner.ask(
        Question("xla_cost", program.digest, function, tuple(ShapeArg(JAX_DTYPES[d], s) for d, s in shapes))
    )
    assert answer.failure is None, answer.failure
    return answer.values, answer.unknown


def test_a_bf16_matmul_has_exactly_the_textbook_flops_and_bytes(runner: AnalysisRunner) -> None:
    values, unknown = ask(runner, "matmul", ("bf16", (B, D)), ("bf16", (D, F)))
    assert unknown == {}
    assert values["flops"] == values["dot_flops"] == 2 * B * D * F
    assert values["bytes"] == 2 * (B * D + D * F + B * F)
    assert values["bytes_unfused"] >= values["bytes"]


def test_a_four_step_scan_counts_four_steps(runner: AnalysisRunner) -> None:
    one, _ = ask(runner, "matmul", ("f32", (256, 256)), ("f32", (256, 256)))
    four, unknown = ask(runner, "scan4", ("f32", (256, 256)), ("f32", (256, 256)))
    assert unknown == {}
    assert four["flops"] == four["dot_flops"] == 4 * one["flops"]


def test_a_static_fori_loop_counts_every_trip_and_its_transcendentals(runner: AnalysisRunner) -> None:
    values, unknown = ask(runner, "loop", ("f32", (64, 64)), ("f32", (64, 64)))
    assert unknown == {}
    assert values["dot_flops"] == 3 * 2 * 64**3
    assert values["transcendentals"] == 3 * 64 * 64


def test_a_lapack_call_makes_its_check_untested_and_bytes_stay_known(runner: AnalysisRunner) -> None:
    text = block(FUNCTIONS) + calc(
        "k = xla_cost(cholesky, f32[512, 512])\nk.flops ≈ 512**3 / 3\nk.bytes == 2 * f32[512, 512].bytes"
    )
    analysis = trusted(text, runner)
    assert [c.status for c in analysis.checks] == ["skip", "pass"]
    (diagnostic,) = analysis.diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("T003", Severity.INFORMATION)
    assert "custom call (lapack_" in diagnostic.message


def test_a_dynamic_while_loop_leaves_the_counts_unknown(runner: AnalysisRunner) -> None:
    values, unknown = ask(runner, "until", ("f32", (16,)))
    assert set(unknown) == {"flops", "transcendentals", "bytes_unfused", "dot_flops"}
    assert "while_loop" in unknown["flops"]
    assert values["bytes"] == 2 * 16 * 4


def test_checks_in_a_draft_pass_and_a_keystroke_lowers_nothing_again(runner: AnalysisRunner) -> None:
    checks = calc(
        "B = 4096\nD = 8192\nF = 8192\nc = xla_cost(matmul, bf16[B, D], bf16[D, F])\n"
        "c.flops == 2 * B * D * F\nc.bytes == 2 * (B*D + D*F + B*F) byte\nc.flops < 2 * B * D * F"
    )
    analysis = trusted(block(FUNCTIONS) + checks, runner)
    assert [c.status for c in analysis.checks] == ["pass", "pass", "fail"]
    sent = runner.requests
    edited = trusted(block(FUNCTIONS) + "Some prose typed meanwhile.\n\n" + checks, runner)
    assert [c.status for c in edited.checks] == ["pass", "pass", "fail"]
    assert runner.requests == sent


def test_the_authors_function_raising_while_traced_is_an_error_at_the_call(runner: AnalysisRunner) -> None:
    text = block(FUNCTIONS) + calc("c = xla_cost(matmul, f32[8, 16], f32[32, 4])")
    (diagnostic,) = trusted(text, runner).diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("T002", Severity.ERROR)
    assert "matmul raised TypeError" in diagnostic.message and "block 1 line 5, in matmul" in diagnostic.message
    assert text[diagnostic.span.start : diagnostic.span.end] == "xla_cost(matmul, f32[8, 16], f32[32, 4])"


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ("xla_cost(B, f32[2])", "U006"),
        ("xla_cost(matmul, 3)", "U006"),
        ("xla_cost()", "N005"),
        ("xla_cost(nope, f32[2])", "N001"),
    ],
)
def test_wrong_arguments_are_errors_in_the_draft(runner: AnalysisRunner, call: str, code: str) -> None:
    analysis = trusted(block(FUNCTIONS) + calc(f"B = 2\n{call}"), runner)
    assert [d.code for d in analysis.diagnostics] == [code]


def test_the_example_of_docs_jax_md_passes(runner: AnalysisRunner) -> None:
    text = (ROOT / "docs" / "jax.md").read_text("utf-8")
    match = re.search(r"````markdown\n(.*?)````", text, re.S)
    assert match is not None
    analysis = trusted(match.group(1), runner)
    assert analysis.diagnostics == []
    assert [c.status for c in analysis.checks] == ["pass", "pass", "pass"]
