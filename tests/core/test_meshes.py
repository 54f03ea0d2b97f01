"""Mesh axes over several axes of a slice, all-to-all over an axis, and chips without slice rules.

Hand arithmetic from the catalog: TPU v5p 90 GB/s one way per link (W_ici = 180 GB/s with
wraparound), v5e 45 GB/s; H100 450 GB/s NVLink egress and 400 GB/s scale-out per host.
"""

from __future__ import annotations

import pytest

from scaling_core.queries.hover import hover_at
from tests.conftest import analyze, codes, statuses
from tests.core.test_slices import error, value

V = 1e9  # 1 GB


@pytest.mark.parametrize(
    ("piece", "expected"),
    [
        ('tpu_v5p["4x4x4"]["xy"].size', 16),
        ('tpu_v5p["4x4x4"]["xy"].ici_bw', 2 * 180e9),  # each axis's links at once
        ('tpu_v5p["4x4x4"]["xy"].wraparound', 1),
        ('tpu_v5p["4x4x4"]["xy"].hops', 2 + 2),
        ('tpu_v5p["2x4x4"]["xy"].wraparound', 0),  # x (2) has no wraparound
        ('tpu_v5p["2x4x4"]["xy"].ici_bw', 90e9 + 180e9),
        ('tpu_v5e["4x4"]["xy"].hops', 3 + 3),
    ],
)
def test_a_mesh_axis_over_several_axes_matches_hand_arithmetic(piece: str, expected: float) -> None:
    assert value(piece) == pytest.approx(expected)


def test_collectives_over_a_mesh_axis_are_the_books_k_axes_cost() -> None:
    # "Over k mesh axes: V/(k·W)" (sharding.md), with wraparound on every axis.
    assert value('allgather_axis(1 GB, tpu_v5p["4x4x4"]["xy"])') == pytest.approx(V / (2 * 180e9))
    assert value('allreduce_axis(1 GB, tpu_v5p["4x4x4"]["xyz"])') == pytest.approx(2 * V / (3 * 180e9))
    # Without wraparound, the one-way ring of X chips over both axes' links: V(X-1)/(X·ΣW).
    assert value('allgather_axis(1 GB, tpu_v5e["4x4"]["xy"])') == pytest.approx(V * 15 / (16 * 2 * 45e9))
    # One axis named as a mesh axis is that axis; the order and commas do not matter.
    assert value('allgather_axis(1 GB, tpu_v5p["4x4x4"]["x"])') == value('allgather_axis(1 GB, tpu_v5p["4x4x4"]["0"])')
    for written in ('["yx"]', '["x, y"]', '["x y"]'):
        assert value(f'tpu_v5p["4x4x8"]{written}.ici_bw') == value('tpu_v5p["4x4x8"]["xy"].ici_bw')


def test_alltoall_over_one_axis() -> None:
    # A ring with wraparound: V/(4·W_ici), as alltoall_time; a line without: V/(4·W_oneway).
    assert value('alltoall_axis(1 GB, tpu_v5p["4x4x4"]["x"])') == pytest.approx(V / (4 * 180e9))
    assert value('alltoall_axis(1 GB, tpu_v5p["4x4x4"]["x"])') == pytest.approx(
        value("alltoall_time(1 GB, 4, tpu_v5p)")
    )
    assert value('alltoall_axis(1 GB, tpu_v5e["4x4"]["y"])') == pytest.approx(V / (4 * 45e9))
    # GPUs of a host over NVLink: V(N-1)/(N²·W), as alltoall_time_gpu; across M hosts: V(M-1)/(M²·W_node).
    assert value('alltoall_axis(1 GB, h100["1x8"]["y"])') == pytest.approx(value("alltoall_time_gpu(1 GB, 8, h100)"))
    assert value('alltoall_axis(1 GB, h100["3x8"]["x"])') == pytest.approx(V * 2 / (9 * 400e9))
    # Latency-bound: hops × 1 µs.
    assert value('alltoall_axis(1 kB, tpu_v5p["4x4x4"]["x"])') == pytest.approx(2e-6)
    # A mesh A×B×C: V·max(A,B,C)/(4·N·W) (sharding.md).
    assert value('alltoall_axis(1 GB, tpu_v5p["4x4x8"]["xyz"])') == pytest.approx(V * 8 / (4 * 128 * 180e9))


def test_an_axis_of_one_chip_costs_nothing() -> None:
    assert value('allgather_axis(1 GB, tpu_v5p["2x2x1"]["z"])') == 0
    assert value('allreduce_axis(1 GB, h100["1x8"]["x"])') == 0
    assert value('alltoall_axis(1 GB, tpu_v5p["2x2x1"]["z"])') == 0
    assert value('tpu_v5p["2x2x1"]["xz"].size') == 2


@pytest.mark.parametrize(
    ("piece", "shown"),
    [
        ('tpu_v5p["4x4x4"]["xx"]', 'names axis "x" twice'),
        ('tpu_v5p["4x4x4"]["xw"]', 'axes are "x", "y", "z"'),
        ('tpu_v5e["4x4"]["xz"]', 'axes are "x", "y"'),
        ('h100["8x8"]["xy"]', 'one axis at a time: "x" (hosts) or "y"'),
        ('tpu7x["4x4x4"]', "tpu7x has no slice rules yet"),
    ],
)
def test_wrong_mesh_axes_and_chips_without_slice_rules_are_h001(piece: str, shown: str) -> None:
    assert shown in error(piece)


DRAFT = """```calc
s = tpu_v5p["4x4x4"]
data = s["xy"]
model = s["z"]
grads = 4 GB
t = allreduce_axis(grads, data)
```

The gradient AllReduce takes about 22 ms<!-- ≈ t -->.
"""


def test_mesh_axes_are_named_by_assignment_and_the_hover_shows_their_axes() -> None:
    analysis = analyze(DRAFT)
    assert codes(analysis) == [] and statuses(analysis) == ["pass"]  # 2·4e9/(2·1.8e11) = 22.2 ms
    shown = hover_at(analysis, DRAFT.index("t ="))
    assert shown is not None
    assert '| axis | `data` | tpu_v5p["4x4x4"]["xy"] (mesh axis over axes x, y of tpu_v5p["4x4x4"]: 16 chips)' in shown
    assert '| ici_bw | `tpu_v5p["4x4x4"]["xy"].ici_bw` | 360 GB/s — the sum of the ici_bw of axes x, y' in shown
    axis = hover_at(analysis, DRAFT.index("data ="))
    assert axis is not None and "axes x, y of" in axis and "16 chips" in axis
