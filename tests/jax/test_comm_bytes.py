"""comm_bytes on an 8-device CPU mesh: each collective's bytes per device are the ring formulas."""

from __future__ import annotations

import pytest

from scaling_core.external import Outcome, Program, Question, ShapeArg
from server.analysis.runner import AnalysisRunner
from tests.jax.conftest import block, calc, needs_jax, trusted

pytestmark = needs_jax

PROGRAMS = """
import jax
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
grid = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

def sharded(spec, body, out):
    return jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=out, check_vma=False)

gather = sharded(P("x"), lambda s: jax.lax.all_gather(s, "x", tiled=True), P())
scatter = sharded(P(), lambda s: jax.lax.psum_scatter(s, "x", tiled=True), P("x"))
allreduce = sharded(P("x"), lambda s: jax.lax.psum(s, "x"), P())
ring = sharded(P("x"), lambda s: jax.lax.ppermute(s, "x", [(i, (i + 1) % 8) for i in range(8)]), P("x"))

def grid_reduce(x):
    body = lambda s: jax.lax.psum(s, "data")
    return jax.shard_map(body, mesh=grid, in_specs=P("data", "model"), out_specs=P(None, "model"), check_vma=False)(x)

def looped(x):
    def body(s):
        return jax.lax.fori_loop(0, 3, lambda i, c: jax.lax.psum(c, "x") / 8, s)
    return sharded(P("x"), body, P())(x)

def plain(x):
    return x * 2
"""
N, D = 8 * 1024, 512
V = 4 * N * D  # bytes of the whole f32[N, D] array
n = 8


def ask(
    runner: AnalysisRunner, function: str, shape: tuple[int, ...] = (N, D)
) -> tuple[dict[str, float], dict[str, str]]:
    program = Program((PROGRAMS.strip() + "\n",))
    assert [c.outcome for c in runner.load(program).cells] == [Outcome.OK]
    answer = runner.ask(Question("comm_bytes", program.digest, function, (ShapeArg("float32", shape),)))
    assert answer.failure is None, answer.failure
    return answer.values, answer.unknown


@pytest.mark.parametrize(
    ("function", "field", "ring"),
    [
        ("gather", "all_gather", (n - 1) * V / n),  # (n-1) x the local shard V/n
        ("scatter", "reduce_scatter", (n - 1) / n * V),  # (n-1)/n x the local full array V
        ("allreduce", "all_reduce", 2 * (n - 1) / n * (V / n)),  # 2(n-1)/n x the local shard
        ("ring", "ppermute", V / n),
    ],
)
def test_each_collective_moves_the_ring_formula(runner: AnalysisRunner, function: str, field: str, ring: float) -> None:
    values, unknown = ask(runner, function)
    assert unknown == {}
    assert values[field] == values[f"{field}_x"] == values["total"] == ring


def test_bytes_are_split_by_mesh_axis(runner: AnalysisRunner) -> None:
    values, unknown = ask(runner, "grid_reduce")
    assert unknown == {}
    assert values["all_reduce_data"] == 2 * (4 - 1) / 4 * (V / 8)
    assert "all_reduce_model" not in values


def test_a_collective_in_a_static_loop_counts_every_trip(runner: AnalysisRunner) -> None:
    values, _ = ask(runner, "looped")
    assert values["all_reduce"] == 3 * 2 * (n - 1) / n * (V / n)


def test_a_program_without_shard_map_has_unknown_communication(runner: AnalysisRunner) -> None:
    values, unknown = ask(runner, "plain", (8,))
    assert "no shard_map" in unknown["total"]


def test_a_communication_claim_is_checked_in_a_draft(runner: AnalysisRunner) -> None:
    text = block(PROGRAMS) + calc(
        "V = f32[8 * 1024, 512].bytes\nX = 8\n"
        "comm_bytes(gather, f32[8 * 1024, 512]).all_gather == (X - 1) / X * V\n"
        "comm_bytes(allreduce, f32[8 * 1024, 512]).all_reduce == 2 * V"
    )
    analysis = trusted(text, runner)
    assert [c.status for c in analysis.checks] == ["pass", "fail"]
