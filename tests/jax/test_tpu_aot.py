"""xla_cost(f, ..., tpu_v5e["2x2"]): compiled for a TPU topology by libtpu, with no TPU (margin[tpu-aot]).

The tests that compile need libtpu (``pip install -e '.[tpu-aot,test]'``) and skip without it; the others
check what a draft gets without it, and how a target is validated, with JAX alone.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from scaling_core import Severity
from scaling_core.external import TPU_FIELDS, Outcome, Program, Question, ShapeArg
from server.analysis.runner import AnalysisRunner
from tests.jax.conftest import block, calc, needs_jax, trusted

pytestmark = needs_jax
#: Looked for without importing it (nor JAX): the analysis process imports them, with this interpreter.
HAS_LIBTPU = importlib.util.find_spec("libtpu") is not None
needs_libtpu = pytest.mark.skipif(not HAS_LIBTPU, reason="libtpu is not installed (pip install 'margin[tpu-aot]')")


@pytest.mark.skipif(
    not os.environ.get("MARGIN_TPU_AOT"), reason="MARGIN_TPU_AOT is not set (CI's .venv-tpu step sets it)"
)
def test_the_tpu_aot_environment_has_libtpu() -> None:
    assert HAS_LIBTPU, "MARGIN_TPU_AOT=1, but libtpu is not importable: the tests below would only skip"


FUNCTIONS = """
import jax
from jax.sharding import PartitionSpec as P

def matmul(x, w):
    return x @ w

def scan4(x, w):
    def step(carry, _):
        return carry @ w, None
    return jax.lax.scan(step, x, None, length=4)[0]

mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
gather = jax.shard_map(
    lambda s: jax.lax.all_gather(s, "x", tiled=True), mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False
)
"""
B, D, F = 4096, 8192, 8192
MATMUL = f"B = {B}\nD = {D}\nF = {F}\n"


def ask(
    runner: AnalysisRunner, function: str, target: str, *shapes: tuple[int, ...]
) -> tuple[dict[str, float], dict[str, str]]:
    program = Program((FUNCTIONS.strip() + "\n",))
    assert [c.outcome for c in runner.load(program).cells] == [Outcome.OK]
    args = tuple(ShapeArg("float32", shape) for shape in shapes)
    answer = runner.ask(Question("xla_cost", program.digest, function, args, target))
    assert answer.failure is None, answer.failure
    return answer.values, answer.unknown


@needs_libtpu
def test_a_bf16_matmul_compiled_for_v5e_has_the_textbook_flops_and_a_roofline_sized_time(
    runner: AnalysisRunner,
) -> None:
    # Measured with jax 0.10.2 + libtpu 0.0.42: compiled flops exactly 2BDF; compiled bytes 2.0x the fused ideal
    # (a prefetch copy of x, tiling re-reads); optimal_seconds 3.15 ms against the 2.79 ms of 2BDF at 197 TFLOP/s.
    checks = calc(
        MATMUL + 'c = xla_cost(matmul, bf16[B, D], bf16[D, F], tpu_v5e["2x2"])\n'
        "c.compiled_flops == 2 * B * D * F\n"
        "c.compiled_bytes >= c.bytes\n"
        "c.compiled_bytes <= 4 * c.bytes\n"
        "t = c.flops / tpu_v5e.flops_bf16\n"
        "c.xla_seconds >= t\n"
        "c.xla_seconds <= 3 * t\n"
        "c.xla_seconds ≈ 2 * B * D * F / tpu_v5e.flops_bf16 ± 15%\n"  # docs/jax.md's example
        "c.flops == 2 * B * D * F"
    )
    analysis = trusted(block(FUNCTIONS) + checks, runner)
    assert analysis.diagnostics == []
    assert [c.status for c in analysis.checks] == ["pass"] * 7


@needs_libtpu
def test_each_generation_has_its_own_compiler_model(runner: AnalysisRunner) -> None:
    shapes = ((2048, 2048), (2048, 2048))
    times = {
        target: ask(runner, "matmul", target, *shapes)[0]["xla_seconds"]
        for target in ("v5e:1x1", "v6e:2x2", "v4:2x2x1")
    }
    assert times["v6e:2x2"] < times["v4:2x2x1"] < times["v5e:1x1"]  # 918, 275 and 197 TFLOP/s chips


@needs_libtpu
def test_a_loop_in_the_tpu_program_leaves_its_compiled_numbers_unknown(runner: AnalysisRunner) -> None:
    # XLA's TPU cost analysis counts a while body once (0.25x for this scan); its optimal_seconds varies in sign.
    values, unknown = ask(runner, "scan4", "v5e:2x2", (256, 256), (256, 256))
    assert set(unknown) == set(TPU_FIELDS)
    assert "loop" in unknown["xla_seconds"]
    assert values["flops"] == 4 * 2 * 256**3  # the CPU fields stay known, loop-corrected


@needs_libtpu
def test_a_program_the_tpu_compiler_refuses_is_unknown_not_an_error(runner: AnalysisRunner) -> None:
    # The shard_map's mesh is the analysis process's 8 CPU devices: it traces on the CPU, not on a TPU chip.
    values, unknown = ask(runner, "gather", "v5e:2x2", (1024, 128))
    assert set(TPU_FIELDS) <= set(unknown)  # (the CPU counts are unknown too: shard_map's custom calls)
    assert unknown["compiled_flops"].startswith("the TPU compiler failed")
    assert values["bytes"] == 2 * 1024 * 128 * 4


@pytest.mark.skipif(HAS_LIBTPU, reason="libtpu is installed: the TPU fields are known")
def test_without_libtpu_the_tpu_fields_are_untested_and_say_how_to_install_it(runner: AnalysisRunner) -> None:
    checks = calc(MATMUL + 'c = xla_cost(matmul, bf16[B, D], bf16[D, F], tpu_v5e["2x2"])\n'
                  "c.xla_seconds > 0 s\nc.flops == 2 * B * D * F")  # fmt: skip
    analysis = trusted(block(FUNCTIONS) + checks, runner)
    assert [c.status for c in analysis.checks] == ["skip", "pass"]
    (diagnostic,) = analysis.diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("T003", Severity.INFORMATION)
    assert "libtpu" in diagnostic.message and "pip install 'margin[tpu-aot]'" in diagnostic.message


def test_a_chip_libtpu_cannot_model_leaves_the_tpu_fields_untested(runner: AnalysisRunner) -> None:
    checks = calc(MATMUL + "c = xla_cost(matmul, bf16[B, D], bf16[D, F], tpu7x)\nc.xla_seconds > 0 s\nc.bytes > 0 byte")
    analysis = trusted(block(FUNCTIONS) + checks, runner)
    assert [c.status for c in analysis.checks] == ["skip", "pass"]
    (diagnostic,) = analysis.diagnostics
    assert diagnostic.code == "T003" and "two devices" in diagnostic.message


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("h100", "U006"),
        ('h100["2x8"]', "U006"),
        ('tpu_v5e["3x3"]', "H001"),
        ('tpu_v5e["x"]', "H001"),
        ("tpu_v5e.hbm", "U006"),
    ],
)
def test_a_target_that_is_not_a_tpu_topology_is_an_error_in_the_draft(
    runner: AnalysisRunner, target: str, code: str
) -> None:
    analysis = trusted(block(FUNCTIONS) + calc(f"xla_cost(matmul, f32[8, 8], f32[8, 8], {target})"), runner)
    assert [d.code for d in analysis.diagnostics] == [code]


def test_a_topology_the_analysis_process_does_not_know_fails_the_question_with_the_reason(
    runner: AnalysisRunner,
) -> None:
    program = Program((FUNCTIONS.strip() + "\n",))
    runner.load(program)
    shapes = (ShapeArg("float32", (8, 8)), ShapeArg("float32", (8, 8)))
    answer = runner.ask(Question("xla_cost", program.digest, "matmul", shapes, "v9:2x2"))
    assert answer.failure is not None and answer.failure[0] == Outcome.NOT_RUN
    assert "'v9:2x2' is not a TPU topology" in answer.failure[1]
