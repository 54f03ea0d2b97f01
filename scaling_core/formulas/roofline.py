"""Roofline formulas: matmul cost, intensity, critical batch, time bounds, cost per FLOP.

Source: How To Scale Your Model, "All About Rooflines" (roofline.md) and
"How to Think About TPUs" (tpus.md).
"""

from __future__ import annotations

from scaling_core.formulas.model import BOOK, formula

ROOFLINE = f"{BOOK}/roofline/"

FORMULAS = [
    formula(
        "matmul_flops", "B D F", "2 FLOP * B * D * F",
        "FLOPs of [B, D] × [D, F]: one multiply and one add per term, 2·B·D·F.", ROOFLINE, "FLOP",
    ),
    formula(
        "matmul_bytes", "B D F bytes_per_element:byte", "bytes_per_element * (B * D + D * F + B * F)",
        "Bytes a [B, D] × [D, F] matmul reads and writes: (BD + DF + BF) elements.", ROOFLINE, "byte",
        bytes_per_element="2 byte",
    ),
    formula(
        "matmul_intensity", "B D F bytes_per_element:byte",
        "2 FLOP * B * D * F / (bytes_per_element * (B * D + D * F + B * F))",
        "Arithmetic intensity of a matmul: 2BDF / (b·(BD + DF + BF)); about B when B ≪ D, F in bf16.",
        ROOFLINE, "FLOP/byte", bytes_per_element="2 byte",
    ),
    formula(
        "critical_batch", "chip:chip weight_bytes:byte flops:FLOP/s",
        "flops / chip.hbm_bw * weight_bytes / (2 FLOP)",
        "Token batch above which a weight-loading matmul is compute-bound: (C/W_hbm)·(bytes per weight / 2).",
        ROOFLINE, "", weight_bytes="2 byte", flops="chip.flops_bf16",
    ),
    formula(
        "compute_time", "flops:FLOP C:FLOP/s", "flops / C",
        "T_math = FLOPs / C.", ROOFLINE, "s",
    ),
    formula(
        "transfer_time", "bytes:byte W:byte/s", "bytes / W",
        "T_comms = bytes / W, for any link: HBM, ICI, PCIe or DCN.", ROOFLINE, "s",
    ),
    formula(
        "roofline_time", "flops:FLOP bytes:byte C:FLOP/s W:byte/s", "max(flops / C, bytes / W)",
        "Lower bound on run time with perfect overlap: max(T_math, T_comms).", ROOFLINE, "s",
    ),
    formula(
        "roofline_time_sum", "flops:FLOP bytes:byte C:FLOP/s W:byte/s", "flops / C + bytes / W",
        "Upper bound on run time with no overlap: T_math + T_comms.", ROOFLINE, "s",
    ),
    formula(
        "flops_per_dollar", "C:FLOP/s price:USD/h", "C / price",
        "FLOPs one dollar buys: C / (price per hour), with the 3600 s per hour handled by the units.",
        f"{BOOK}/applied-inference/", "FLOP/USD",
    ),
]  # fmt: skip
