#!/usr/bin/env bash
# Measure the matmul sweep of examples/measured-roofline.md on this machine's accelerator and print
# measured vs roofline per size.  Run it on a machine with the GPU the example is about (an H200):
#
#     bash bench/accelerator.sh            # CHIP=h200, TIMEOUT=600 seconds
#
# It runs `margin measure ... --on local --chip $CHIP`, which writes .margin/measurements.json
# (commit the new entries: `margin check examples/` then checks them in CI without a GPU), and
# prints one line per size.  On a machine without an accelerator it stops: JAX would time the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
CHIP="${CHIP:-h200}"
DRAFT="${DRAFT:-examples/measured-roofline.md}"

backend=$("$PYTHON" -c 'import jax; print(jax.default_backend())')
if [ "$backend" = "cpu" ]; then
    echo "bench/accelerator.sh: JAX sees no GPU or TPU here (backend: cpu); nothing measured" >&2
    exit 2
fi

timeout "${TIMEOUT:-600}" "$PYTHON" -m server measure "$DRAFT" --on local --chip "$CHIP" || status=$?
[ "${status:-0}" -le 1 ] || exit "$status"

"$PYTHON" - "$CHIP" <<'PY'
"""Measured vs roofline for every matmul of the cache measured on the chip."""
import sys
from pathlib import Path

from scaling_core import Config
from scaling_core.hardware.records import hardware_records
from server.measurements import MeasurementCache

chip = sys.argv[1]
record = hardware_records(Config())[chip]
peak, bandwidth = record.fields["flops_bf16"].value, record.fields["hbm_bw"].value
rows = []
for devices in MeasurementCache(Path.cwd()).entries.values():
    entry = devices.get(chip)
    if entry is None or entry["request"].get("op") != "matmul":
        continue
    spec, result = entry["request"], entry["result"]
    B, D, F = spec["B"], spec["D"], spec["F"]
    size = {"bfloat16": 2, "float16": 2, "float32": 4}.get(spec["dtype"], 2)
    roofline = max(2 * B * D * F / peak, size * (B * D + D * F + B * F) / bandwidth)
    rows.append((B, D, F, roofline, result["median_s"], result["min_s"], result["cv"],
                 entry["provenance"].get("device_kind", "?")))
print(f"{'B':>6} {'D':>6} {'F':>6} {'roofline':>10} {'median':>10} {'min':>10} {'median/roof':>11} {'CV':>5}  device")
for B, D, F, roof, median, low, cv, kind in sorted(rows):
    print(f"{B:>6} {D:>6} {F:>6} {roof * 1e6:>8.1f}us {median * 1e6:>8.1f}us {low * 1e6:>8.1f}us "
          f"{median / roof:>11.2f} {cv:>5.2f}  {kind}")
PY
