"""Training: memory, time, MFU and the parallelism thresholds.

Source: How To Scale Your Model, "How to Parallelize a Transformer for
Training" (training.md) and "Training LLaMA 3 on TPUs" (applied-training.md).
Thresholds are token batches per chip (counts).
"""

from __future__ import annotations

from scaling_core.formulas.model import BOOK, formula

TRAINING = f"{BOOK}/training/"

FORMULAS = [
    formula(
        "param_bytes", "params bytes_per_param:byte", "params * bytes_per_param",
        "Weight memory: parameters × bytes per parameter (bf16: 2).", TRAINING, "byte", bytes_per_param="2 byte",
    ),
    formula(
        "adam_bytes", "params", "8 byte * params",
        "Adam optimizer state in fp32: two moments, 8 bytes per parameter.", TRAINING, "byte",
    ),
    formula(
        "training_state_bytes", "params", "params * (2 byte + 8 byte)",
        "bf16 weights plus fp32 Adam state: 10 bytes per parameter (gradients not counted).", TRAINING, "byte",
    ),
    formula(
        "activation_bytes", "B T D L checkpoints_per_layer", "2 byte * checkpoints_per_layer * B * T * D * L",
        "bf16 activations kept for the backward pass: about 20 [B, T, D] tensors per layer without "
        "rematerialisation, 1 with block remat.", TRAINING, "byte", checkpoints_per_layer="20",
    ),
    formula(
        "training_time", "params tokens chips chip:chip mfu", "6 FLOP * params * tokens / (chips * chip.flops_bf16 * mfu)",
        "Wall-clock training time: 6·N·tokens / (chips · C · MFU).", TRAINING, "s",
    ),
    formula(
        "mfu", "params tokens_per_second:1/s chips chip:chip",
        "6 FLOP * params * tokens_per_second / (chips * chip.flops_bf16)",
        "Model FLOPs utilisation: 6 · N · tokens per second / (chips · C).", TRAINING, "",
    ),
    formula(
        "fsdp_min_batch", "chip:chip axes", "chip.flops_bf16 / (axes * chip.ici_bw_bidi) * 1 byte/FLOP",
        "Per-chip token batch above which FSDP / data parallelism stays compute-bound: C / (M_X · W_ici).",
        TRAINING, "", axes="1",
    ),
    formula(
        "tensor_parallel_max", "F chip:chip axes", "axes * F / (chip.flops_bf16 / chip.ici_bw_bidi * 1 byte/FLOP)",
        "Largest tensor-parallel degree that stays compute-bound: M_Y · F · W_ici / C.", TRAINING, "", axes="1",
    ),
    formula(
        "dcn_min_batch", "chip:chip", "chip.flops_bf16 / chip.dcn_bw * 1 byte/FLOP",
        "Per-chip token batch above which data parallelism across slices (over DCN) is compute-bound: C / W_dcn.",
        TRAINING, "",
    ),
    formula(
        "pipeline_comms_time", "B D W:byte/s microbatches stages bytes_per_element:byte",
        "bytes_per_element * B * D / (W * microbatches) * (microbatches + stages - 2)",
        "Pipeline activation transfers: 2BD/(W·N_mb) · (N_mb + N_stages − 2).", TRAINING, "s",
        bytes_per_element="2 byte",
    ),
]  # fmt: skip
