"""Every library formula: numerically and symbolically against a hand computation."""

from __future__ import annotations

import pytest
import sympy

from scaling_core.formulas import LIBRARY
from scaling_core.formulas.symbolic import latex, symbolic
from tests.conftest import codes, run

V5E_C, V5E_W, V5E_OW, V5E_BI = 197e12, 819e9, 45e9, 90e9
V5P_C, V5P_BI, V5P_DCN = 459e12, 180e9, 6.25e9
H100_C, H100_W, H100_EGRESS = 989.4e12, 3.35e12, 18 * 25e9

# (formula, call, expected SI value computed by hand, expected symbolic form)
CASES = [
    ("matmul_flops", "matmul_flops(128, 8192, 8192)", 2 * 128 * 8192 * 8192, "2*B*D*F"),
    ("matmul_bytes", "matmul_bytes(128, 8192, 8192)", 2 * (128 * 8192 + 8192 * 8192 + 128 * 8192),
     "bytes_per_element*(B*D + D*F + B*F)"),
    ("matmul_intensity", "matmul_intensity(128, 8192, 8192)", 17179869184 / 138412032,
     "2*B*D*F/(bytes_per_element*(B*D + D*F + B*F))"),
    ("critical_batch", "critical_batch(tpu_v5e, 1 byte)", V5E_C / V5E_W * 1 / 2, "flops*weight_bytes/(2*W_hbm)"),
    ("compute_time", "compute_time(1e12 FLOP, 1e15 FLOP/s)", 1e-3, "flops/C"),
    ("transfer_time", "transfer_time(1e9 byte, 1e11 byte/s)", 1e-2, "bytes/W"),
    ("roofline_time", "roofline_time(1e12 FLOP, 1e9 byte, 1e15 FLOP/s, 1e11 byte/s)", 1e-2, "Max(flops/C, bytes/W)"),
    ("roofline_time_sum", "roofline_time_sum(1e12 FLOP, 1e9 byte, 1e15 FLOP/s, 1e11 byte/s)", 1.1e-2, "flops/C + bytes/W"),
    ("flops_per_dollar", "flops_per_dollar(1e15 FLOP/s, 3.6 USD/h)", 1e15 / (3.6 / 3600), "C/price"),
    ("allgather_time", "allgather_time(bf16[1024, 4096].bytes, 4, tpu_v5e)", 2 * 1024 * 4096 / V5E_BI,
     "Max(V/W_ici, X*t_hop/2)"),
    ("allgather_time_nowrap", "allgather_time_nowrap(8388608 byte, 4, tpu_v5e)", 8388608 * 3 / (4 * V5E_OW),
     "Max((X - 1)*t_hop, V*(X - 1)/(X*W_ici_oneway))"),
    ("allgather_time_axes", "allgather_time_axes(9e10 byte, 3, tpu_v5p)", 9e10 / (3 * V5P_BI), "V/(axes*W_ici)"),
    ("reducescatter_time", "reducescatter_time(1e3 byte, 16, tpu_v5e)", 16 * 1e-6 / 2, "Max(V/W_ici, X*t_hop/2)"),
    ("allreduce_time", "allreduce_time(8388608 byte, 4, tpu_v5e)", 2 * 8388608 / V5E_BI, "2*Max(V/W_ici, X*t_hop/2)"),
    ("alltoall_time", "alltoall_time(9e10 byte, 4, tpu_v5e)", 9e10 / (4 * V5E_BI), "Max(V/(4*W_ici), X*t_hop/2)"),
    ("p2p_time", "p2p_time(9e10 byte, 2, tpu_v5e)", 9e10 / (2 * V5E_OW), "V/(links*W_ici_oneway)"),
    ("first_byte_latency", "first_byte_latency(6, tpu_v5e)", 6e-6, "hops*t_hop"),
    ("allgather_time_gpu", "allgather_time_gpu(4.5e11 byte, 8, h100)", 4.5e11 * 7 / (8 * H100_EGRESS), "V*(N - 1)/(N*W_egress)"),
    ("allreduce_time_gpu", "allreduce_time_gpu(4.5e11 byte, 8, h100)", 2 * 4.5e11 * 7 / (8 * H100_EGRESS),
     "2*V*(N - 1)/(N*W_egress)"),
    ("alltoall_time_gpu", "alltoall_time_gpu(4.5e11 byte, 8, h100)", 4.5e11 * 7 / (64 * H100_EGRESS),
     "V*(N - 1)/(N**2*W_egress)"),
    ("allgather_axis", 'allgather_axis(9e10 byte, tpu_v5p["4x4x4"]["x"])', 9e10 / V5P_BI,
     "Max(hops*t_hop, V*(size + wraparound - 1)/(ici_bw*size))"),
    ("reducescatter_axis", 'reducescatter_axis(8388608 byte, tpu_v5e["4x4"]["y"])', 8388608 * 3 / (4 * V5E_OW),
     "Max(hops*t_hop, V*(size + wraparound - 1)/(ici_bw*size))"),
    ("allreduce_axis", 'allreduce_axis(4.5e11 byte, h100["1x8"]["y"])', 2 * 4.5e11 * 7 / (8 * H100_EGRESS),
     "2*Max(hops*t_hop, V*(size + wraparound - 1)/(ici_bw*size))"),
    # sharding.md: AllToAll ≈ V/(4·W_ici) on a bidirectional ring.
    ("alltoall_axis", 'alltoall_axis(9e10 byte, tpu_v5p["4x4x4"]["x"])', 9e10 / (4 * V5P_BI),
     "Max(hops*t_hop, V*alltoall_share/ici_bw)"),
    ("transformer_params", "transformer_params(80, 8192, 28672, 64, 8, 128, 128256)",
     80 * (704_643_072 + 150_994_944) + 1_050_673_152, "L*(3*D*F + 2*D*(N + K)*H) + D*V"),
    ("moe_params", "moe_params(2, 4, 8, 2, 1, 2, 10, 4)", 904, "L*(3*E*D*F + 2*D*(N + K)*H) + D*V"),
    ("moe_active_params", "moe_active_params(2, 4, 8, 2, 1, 2, 10, 2)", 520, "L*(3*k*D*F + 2*D*(N + K)*H) + D*V"),
    ("training_flops", "training_flops(70e9, 15e12)", 6.3e24, "6*params*tokens"),
    ("inference_flops", "inference_flops(70e9, 1)", 1.4e11, "2*params*tokens"),
    ("attention_flops", "attention_flops(1, 8192, 8192, 64, 128)", 2_199_023_255_552, "4*B*T*S*N*H"),
    ("attention_intensity", "attention_intensity(8192, 8192, 64, 8)", 8192 * 8 / 9, "T*S*N/(T*N + S*K)"),
    ("kv_cache_bytes", "kv_cache_bytes(64, 8, 128, 1)", 262_144, "2*L*K*H*S*bytes_per_element"),
    ("param_bytes", "param_bytes(70e9)", 1.4e11, "params*bytes_per_param"),
    ("adam_bytes", "adam_bytes(70e9)", 5.6e11, "8*params"),
    ("training_state_bytes", "training_state_bytes(70e9)", 7e11, "10*params"),
    ("activation_bytes", "activation_bytes(8, 4096, 8192, 80)", 858_993_459_200, "2*checkpoints_per_layer*B*T*D*L"),
    ("training_time", "training_time(70e9, 15e12, 8192, h100, 0.4)", 6.3e24 / (8192 * H100_C * 0.4),
     "6*params*tokens/(chips*C*mfu)"),
    ("mfu", "mfu(70e9, 7.7e6 token/s, 8192, h100)", 6 * 70e9 * 7.7e6 / (8192 * H100_C), "6*params*tokens_per_second/(chips*C)"),
    ("fsdp_min_batch", "fsdp_min_batch(tpu_v5p, 3)", V5P_C / (3 * V5P_BI), "C/(axes*W_ici)"),
    ("tensor_parallel_max", "tensor_parallel_max(28672, tpu_v5p)", 28672 / (V5P_C / V5P_BI), "axes*F*W_ici/C"),
    ("dcn_min_batch", "dcn_min_batch(tpu_v5p)", V5P_C / V5P_DCN, "C/W_dcn"),
    ("pipeline_comms_time", "pipeline_comms_time(1e6, 8192, 4.5e10 byte/s, 8, 4)", 2 * 1e6 * 8192 / (4.5e10 * 8) * 10,
     "bytes_per_element*B*D*(microbatches + stages - 2)/(W*microbatches)"),
    ("latency_floor", "latency_floor(1.4e11 byte, 8, h100)", 1.4e11 / (8 * H100_W), "param_bytes/(chips*W_hbm)"),
    ("decode_step_time", "decode_step_time(32, 1e9 byte, 70e9, 1.4e11 byte, 8, h100)",
     32 * 1e9 / (8 * H100_W) + max(2 * 32 * 70e9 / (8 * H100_C), 1.4e11 / (8 * H100_W)),
     "B*kv_bytes/(chips*W_hbm) + Max(2*B*params/(chips*C), param_bytes/(chips*W_hbm))"),
    ("prefill_time", "prefill_time(70e9, 8192, 8, h100)", 2 * 70e9 * 8192 / (8 * H100_C), "2*params*tokens/(chips*C*mfu)"),
    ("max_batch", "max_batch(8, h100, 1.4e11 byte, 8.4e9 byte)", 59, "floor((chips*M_hbm - param_bytes)/kv_bytes)"),
]  # fmt: skip


def test_every_formula_has_a_case_a_doc_and_a_source() -> None:
    assert {case[0] for case in CASES} == set(LIBRARY)
    for formula in LIBRARY.values():
        assert formula.doc and formula.source.startswith("https://jax-ml.github.io/scaling-book/")


@pytest.mark.parametrize(("name", "call", "expected", "form"), CASES, ids=[c[0] for c in CASES])
def test_formula_numerically(name: str, call: str, expected: float, form: str) -> None:
    result = run(call)
    assert codes(result) == [], result.diagnostics
    assert result.value is not None and result.value.quantity is not None
    assert result.value.quantity.value == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("name", "call", "expected", "form"), CASES, ids=[c[0] for c in CASES])
def test_formula_symbolically(name: str, call: str, expected: float, form: str) -> None:
    actual = symbolic(LIBRARY[name])
    names = {s.name: s for s in actual.free_symbols}
    hand = sympy.parse_expr(form, local_dict={**names, "Max": sympy.Max, "floor": sympy.floor})
    assert sympy.simplify(actual - hand) == 0, f"{actual} != {hand}"
    assert latex(LIBRARY[name])


def test_formula_arguments_are_unit_checked() -> None:
    assert codes(run("allgather_time(3 s, 4, tpu_v5e)")) == ["U001"]
    assert codes(run("allgather_time(1e6, 4, 5)")) == ["U006"]
    assert codes(run("allgather_time(1e6)")) == ["N005"]
    assert codes(run("transformer_params(80 s, 1, 1, 1, 1, 1, 1)")) == ["U001"]


def test_unannotated_arguments_take_the_parameters_unit() -> None:
    assert run("allgather_time(9e10, 4, tpu_v5e)").value.display == "1 s"  # type: ignore[union-attr]


def test_errors_inside_a_formula_are_reported_at_the_call() -> None:
    result = run("attention_intensity(0, 0, 1, 1)")
    assert codes(result) == ["E001"]
    assert "in attention_intensity" in result.diagnostics[0].message
    assert result.diagnostics[0].span.start == 0
