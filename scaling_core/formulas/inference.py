"""Inference: latency floor, decode step, prefill, batch capacity.

Source: How To Scale Your Model, "All About Transformer Inference"
(inference.md) and "Serving LLaMA 3-70B on TPUs" (applied-inference.md).
"""

from __future__ import annotations

from scaling_core.formulas.model import BOOK, formula

INFERENCE = f"{BOOK}/inference/"

FORMULAS = [
    formula(
        "latency_floor", "param_bytes:byte chips chip:chip", "param_bytes / (chips * chip.hbm_bw)",
        "No decode step is faster than reading every weight once: param_bytes / (chips · W_hbm).", INFERENCE, "s",
    ),
    formula(
        "decode_step_time", "B kv_bytes:byte params param_bytes:byte chips chip:chip",
        "B * kv_bytes / (chips * chip.hbm_bw) + max(2 FLOP * B * params / (chips * chip.flops_bf16), "
        "param_bytes / (chips * chip.hbm_bw))",
        "One decode step: B·KV/W_total + max(2·B·params/C_total, param_bytes/W_total).", INFERENCE, "s",
    ),
    formula(
        "prefill_time", "params tokens chips chip:chip mfu", "2 FLOP * params * tokens / (chips * chip.flops_bf16 * mfu)",
        "Prefill is compute-bound: 2 · params · tokens / (chips · C · MFU).", INFERENCE, "s", mfu="1",
    ),
    formula(
        "max_batch", "chips chip:chip param_bytes:byte kv_bytes:byte",
        "floor((chips * chip.hbm - param_bytes) / kv_bytes)",
        "Sequences whose KV caches fit beside the weights: ⌊(chips·HBM − param_bytes) / KV per sequence⌋.",
        INFERENCE, "",
    ),
]  # fmt: skip
