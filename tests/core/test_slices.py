"""Slices as values: fields against hand arithmetic, wraparound rules, illegal shapes, axis collectives."""

from __future__ import annotations

import pytest

from scaling_core.document.session import CalcSession
from tests.conftest import analyze, codes, statuses

GiB = 2**30


def value(expression: str) -> float | list[float]:
    """The SI value of an expression (a list for per-axis fields)."""
    evaluation = CalcSession().run(expression)
    assert evaluation.value is not None and evaluation.value.quantity is not None, evaluation.diagnostics
    magnitude = evaluation.value.quantity.value
    return [float(v) for v in magnitude] if hasattr(magnitude, "__len__") else float(magnitude)


def error(expression: str) -> str:
    evaluation = CalcSession().run(expression)
    assert evaluation.value is None
    (diagnostic,) = evaluation.diagnostics
    assert diagnostic.code == "H001"
    return diagnostic.message


# (slice, field, hand arithmetic from the chip's catalog figures)
HAND = [
    # TPU v5p, 459 TFLOP/s, 95 GiB, 2765 GB/s, 90 GB/s one way per link, 6 links (one per axis and direction).
    ('tpu_v5p["4x4x4"]', "chips", 4 * 4 * 4),
    ('tpu_v5p["4x4x4"]', "hosts", 64 / 4),  # hosts of 2x2x1
    ('tpu_v5p["4x4x4"]', "axes", [4, 4, 4]),
    ('tpu_v5p["4x4x4"]', "wraparound", [1, 1, 1]),  # multiples of 4 wrap
    ('tpu_v5p["4x4x4"]', "flops_bf16", 64 * 459e12),
    ('tpu_v5p["4x4x4"]', "hbm", 64 * 95 * GiB),
    ('tpu_v5p["4x4x4"]', "hbm_bw", 64 * 2765e9),
    ('tpu_v5p["4x4x4"]', "ici_bw", [2 * 90e9] * 3),  # both directions with wraparound: the book's W_ici
    ('tpu_v5p["4x4x4"]', "bisection_bw", 16 * 2 * 90e9),  # 16 rows cut, 2 links each (wraparound), one way
    ('tpu_v5p["2x4x4"]', "wraparound", [0, 1, 1]),
    ('tpu_v5p["2x4x4"]', "ici_bw", [90e9, 180e9, 180e9]),
    ('tpu_v5p["2x2x1"]', "hosts", 1),
    ('tpu_v5p["2x2x1"]', "ici_bw", [90e9, 90e9, 0]),
    ('tpu_v5p["16x20x28"]', "chips", 8960),  # the book's full pod
    ('tpu_v5p["16x20x28"]', "hosts", 2240),  # tpus.md Question 2: 16*20*28 / (2*2)
    ('tpu_v5p["16x20x28"]', "wraparound", [1, 1, 1]),
    ('tpu_v5p["8x8x12"]', "chips", 768),
    # TPU v4 (v4p): 275 TFLOP/s, 45 GB/s one way per link; pod 16x16x16 of 2x2x1 hosts.
    ('tpu_v4["16x16x16"]', "hosts", 4096 / 4),
    ('tpu_v4["4x4x4"]', "ici_bw", [90e9] * 3),
    ('tpu_v4["4x4x4"]', "flops_bf16", 64 * 275e12),
    # TPU v5e: 197 TFLOP/s, 16 GB, 819 GB/s, 45 GB/s one way; hosts of 4x2; wraparound only on a full 16.
    ('tpu_v5e["16x16"]', "hosts", 16 * 16 / 8),  # tpus.md Question 2: 32 hosts
    ('tpu_v5e["16x16"]', "hbm", 256 * 16e9),  # "256 * 16 = 4TB"
    ('tpu_v5e["16x16"]', "flops_bf16", 256 * 197e12),
    ('tpu_v5e["16x16"]', "wraparound", [1, 1]),
    ('tpu_v5e["16x16"]', "ici_bw", [90e9, 90e9]),
    ('tpu_v5e["16x16"]', "bisection_bw", 16 * 2 * 45e9),
    ('tpu_v5e["4x4"]', "hosts", 2),  # tpus.md Question 6: "a 4x4 has 2 hosts"
    ('tpu_v5e["4x4"]', "wraparound", [0, 0]),  # tpus.md Question 5: no wraparound below 16
    ('tpu_v5e["4x4"]', "ici_bw", [45e9, 45e9]),
    ('tpu_v5e["4x4"]', "bisection_bw", 4 * 45e9),
    ('tpu_v5e["8x16"]', "wraparound", [0, 1]),
    # TPU v6e: 918 TFLOP/s, 90 GB/s one way.
    ('tpu_v6e["16x16"]', "flops_bf16", 256 * 918e12),
    ('tpu_v6e["16x16"]', "ici_bw", [180e9, 180e9]),
    # H100: 8 GPUs per host, 18 NVLink links x 25 GB/s = 450 GB/s egress, one 400 Gbit/s NIC per GPU.
    ('h100["8x8"]', "chips", 64),
    ('h100["8x8"]', "hosts", 8),
    ('h100["8x8"]', "flops_bf16", 64 * 989.4e12),
    ('h100["8x8"]', "ici_bw", [8 * 50e9, 450e9]),  # across hosts: the book's W_node = 400 GB/s
    ('h100["8x8"]', "scaleout_bw", 400e9),
    ('h100["8x8"]', "nvlink_domain", 8),
    ('h100["8x8"]', "bisection_bw", 32 * 50e9),
    ('h100["1x8"]', "ici_bw", [0, 450e9]),
    ('h100["1x8"]', "bisection_bw", 4 * 450e9),
    # GB200 NVL72: 72 GPUs in one NVLink domain (18 trays of 4).
    ('gb200["18x4"]', "ici_bw", [900e9, 900e9]),
    ('gb200["18x4"]', "nvlink_domain", 72),
    ('gb200["36x4"]', "ici_bw", [4 * 50e9, 900e9]),
    ('gb200["36x4"]', "nvlink_domain", 72),
]


@pytest.mark.parametrize(("piece", "field", "expected"), HAND)
def test_slice_fields_match_hand_arithmetic(piece: str, field: str, expected: float | list[float]) -> None:
    assert value(f"{piece}.{field}") == pytest.approx(expected)


@pytest.mark.parametrize(
    ("piece", "shown"),
    [
        ('tpu_v5e["3x5"]', "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"),
        ('tpu_v5e["4x4x4"]', "1x1, 2x2, 2x4"),
        ('tpu_v5p["3x3x3"]', "2x2x2, 2x2x4, 2x4x4, or each axis a multiple of 4 up to 16x20x28"),
        ('tpu_v5p["4x4x32"]', "up to 16x20x28"),
        ('tpu_v4["16x16x20"]', "up to 16x16x16"),
        ('h100["8x3"]', "HOSTSxGPUS with GPUS one of 1, 2, 4, 8"),
    ],
)
def test_an_illegal_shape_is_h001_naming_the_legal_ones(piece: str, shown: str) -> None:
    message = error(piece)
    assert "is not a slice of" in message and shown in message


def test_other_wrong_indexes_are_h001_too() -> None:
    assert "is not a shape" in error('tpu_v5e["big"]')
    assert "tpu7x has no slice rules yet" in error('tpu7x["4x4x4"]')
    assert "no slices or axes" in error('tpu_v5p.hbm["4x4x4"]')
    assert 'axes are "x", "y", "z"' in error('tpu_v5p["4x4x4"]["w"]')


def test_in_a_draft_the_diagnostic_is_on_the_shape_and_the_statement_is_skipped() -> None:
    analysis = analyze('```calc\ns = tpu_v5e["3x5"]\nn = s.chips\n```\n\n`tpu_v5e["4x4"].chips * 1 = 16`\n')
    assert codes(analysis)[0] == "H001"
    diagnostic = analysis.diagnostics[0]
    assert analysis.text[diagnostic.span.start : diagnostic.span.end] == '"3x5"'
    assert statuses(analysis) == ["pass"]


@pytest.mark.parametrize(
    ("axis_call", "chip_call"),
    [
        ('allgather_axis(1 GB, tpu_v5p["4x4x4"]["x"])', "allgather_time(1 GB, 4, tpu_v5p)"),
        ('allgather_axis(1 GB, tpu_v5e["16x16"]["y"])', "allgather_time(1 GB, 16, tpu_v5e)"),
        ('allgather_axis(1 GB, tpu_v5e["4x4"]["0"])', "allgather_time_nowrap(1 GB, 4, tpu_v5e)"),
        ('allgather_axis(10 kB, tpu_v5e["4x4"]["x"])', "allgather_time_nowrap(10 kB, 4, tpu_v5e)"),  # latency-bound
        ('reducescatter_axis(1 GB, tpu_v5p["4x4x4"]["z"])', "reducescatter_time(1 GB, 4, tpu_v5p)"),
        ('allreduce_axis(1 GB, tpu_v5p["4x4x4"]["y"])', "allreduce_time(1 GB, 4, tpu_v5p)"),
        ('allgather_axis(1 GB, h100["1x8"]["y"])', "allgather_time_gpu(1 GB, 8, h100)"),
        ('allreduce_axis(1 GB, h100["1x8"]["y"])', "allreduce_time_gpu(1 GB, 8, h100)"),
    ],
)
def test_axis_collectives_agree_with_the_chip_formulas_of_the_same_case(axis_call: str, chip_call: str) -> None:
    assert value(axis_call) == pytest.approx(value(chip_call))


def test_axis_collectives_by_hand() -> None:
    # v5p 4x4x4, one axis with wraparound: V / W_ici = 1e9 / 1.8e11.
    assert value('allgather_axis(1 GB, tpu_v5p["4x4x4"]["x"])') == pytest.approx(1e9 / 180e9)
    # v5e 4x4, no wraparound: V(X-1)/(X W_oneway) = 1e9 * 3 / (4 * 45e9); latency hops.
    assert value('allgather_axis(1 GB, tpu_v5e["4x4"]["x"])') == pytest.approx(1e9 * 3 / (4 * 45e9))
    assert value('allgather_axis(1 kB, tpu_v5e["4x4"]["x"])') == pytest.approx(3e-6)
    # H100 across 8 hosts: V(N-1)/(N W_node), W_node = 400 GB/s; AllReduce twice that.
    assert value('allreduce_axis(1 GB, h100["8x8"]["x"])') == pytest.approx(2 * 1e9 * 7 / (8 * 400e9))


def test_an_axis_formula_needs_an_axis() -> None:
    evaluation = CalcSession().run("allgather_axis(1 GB, tpu_v5p)")
    assert [d.code for d in evaluation.diagnostics] == ["U006"]
    assert 'an axis of a slice such as tpu_v5p["4x4x4"]["x"]' in evaluation.diagnostics[0].message


def test_a_slice_works_where_a_chip_is_expected() -> None:
    # Per-link fields are the chip's, so the chip formulas accept a slice.
    assert value('allgather_time(1 GB, 4, tpu_v5p["4x4x4"])') == pytest.approx(
        value("allgather_time(1 GB, 4, tpu_v5p)")
    )


def test_the_hover_derivation_shows_the_slice_fields_with_their_sources() -> None:
    from scaling_core.queries.hover import hover_at

    text = '```calc\nt = allgather_axis(1 GB, tpu_v5p["4x4x4"]["x"])\nc = tpu_v5p["4x4x4"].flops_bf16 / 2\n```\n'
    analysis = analyze(text)
    gather = hover_at(analysis, text.index("t ="))
    assert gather is not None
    assert '| ici_bw | `tpu_v5p["4x4x4"]["x"].ici_bw` | 180 GB/s' in gather
    assert '| wraparound | `tpu_v5p["4x4x4"]["x"].wraparound` | 1' in gather
    compute = hover_at(analysis, text.index("c ="))
    assert compute is not None
    assert '`tpu_v5p["4x4x4"].flops_bf16` = 2.938e16 FLOP/s: tpu_v5p.flops_bf16 × 64 chips; https://' in compute
