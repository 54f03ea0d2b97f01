"""Transformer accounting: parameters, FLOPs, attention, KV cache.

Source: How To Scale Your Model, "All the Transformer Math You Need to Know"
(transformers.md).  Notation: L layers, D model width, F MLP width (gated
MLP: 3DF parameters), N query heads, K key/value heads (GQA), H head size,
V vocabulary, E experts, k experts per token, T query and S key lengths.
"""

from __future__ import annotations

from scaling_core.formulas.model import BOOK, formula

TRANSFORMERS = f"{BOOK}/transformers/"

FORMULAS = [
    formula(
        "transformer_params", "L D F N K H V", "L * (3 * D * F + 2 * D * (N + K) * H) + D * V",
        "Dense parameters: L·(3DF + 2D(N+K)H) + DV (gated MLP, GQA attention, tied embeddings; norms ignored).",
        TRANSFORMERS, "",
    ),
    formula(
        "moe_params", "L D F N K H V E", "L * (3 * E * D * F + 2 * D * (N + K) * H) + D * V",
        "Total MoE parameters: every expert's MLP, L·(3EDF + 2D(N+K)H) + DV.", TRANSFORMERS, "",
    ),
    formula(
        "moe_active_params", "L D F N K H V k", "L * (3 * k * D * F + 2 * D * (N + K) * H) + D * V",
        "Active MoE parameters per token: k experts' MLPs, L·(3kDF + 2D(N+K)H) + DV.", TRANSFORMERS, "",
    ),
    formula(
        "training_flops", "params tokens", "6 FLOP * params * tokens",
        "Training FLOPs ≈ 6 · parameters · tokens (2 forward, 4 backward).", TRANSFORMERS, "FLOP",
    ),
    formula(
        "inference_flops", "params tokens", "2 FLOP * params * tokens",
        "Forward-pass FLOPs ≈ 2 · parameters · tokens.", TRANSFORMERS, "FLOP",
    ),
    formula(
        "attention_flops", "B T S N H", "4 FLOP * B * T * S * N * H",
        "Forward dot-product attention FLOPs: QKᵀ and AV, each 2·B·T·S·N·H (training is 3× this).",
        TRANSFORMERS, "FLOP",
    ),
    formula(
        "attention_intensity", "T S N K", "T * S * N / (T * N + S * K) * 1 FLOP/byte",
        "bf16 attention intensity TSN/(TN + SK): T·G/(G+1) in prefill (T = S), S·G/(G+S) → G in decode.",
        TRANSFORMERS, "FLOP/byte",
    ),
    formula(
        "kv_cache_bytes", "L K H S bytes_per_element:byte", "2 * L * K * H * S * bytes_per_element",
        "KV cache for one sequence: keys and values (the factor 2) for L layers, K heads of size H, S tokens.",
        TRANSFORMERS, "byte", bytes_per_element="2 byte",
    ),
]  # fmt: skip
