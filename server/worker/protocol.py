"""The worker protocol: JSON lines over the worker's stdin and stdout.

One JSON object per line, in both directions.  The worker's stdout carries
protocol lines only (file descriptor 1 is pointed at stderr at start-up, so
nothing JAX, a C library or the author's code prints can corrupt it); its
stderr carries logs, which the client keeps to quote when the worker fails.
The worker exits when its stdin closes (so closing an ssh connection, or the
client dying, ends it).

Worker → client, unasked:

``{"kind": "ready", "protocol": 1, "import_jax_s": 0.4, "provenance": {...}}``
    once, after JAX is imported (and ``jax.distributed`` initialised, in a
    gang).  When JAX cannot be imported: ``{"kind": "ready", "protocol": 1,
    "error": "module 'jax' is not installed for /usr/bin/python3"}``.
``{"kind": "heartbeat", "busy": ID | null, "t": UNIX_SECONDS}``
    every ``--heartbeat`` seconds (default :data:`HEARTBEAT_SECONDS`), also
    while a measurement runs: a worker that stops sending them is stuck or
    stopped, and the client kills it.

Client → worker (each request has a ``"v": 1`` and an ``"id"``, echoed in its replies):

``{"op": "hello"}``
    → ``{"kind": "hello", "provenance": {...}}``
``{"op": "ping"}``
    → ``{"kind": "pong", "busy": ID | null}``
``{"op": "measure", "deadline": SECONDS, "spec": {...}}``
    → ``accepted``, then ``started``, then ``{"kind": "result", "ok": true,
    "result": {"median_s", "min_s", "p90_s", "cv", "n", "samples",
    "compile_s", "inner", "warmup"}, "provenance": {...}}`` or ``{"kind":
    "result", "ok": false, "error": {"type": "cancelled" | "deadline" |
    EXCEPTION, "message": ..., "traceback": ...}}``.  ``deadline`` is in
    seconds from when the worker reads the request (not a clock time: hosts'
    clocks differ).  Jobs run one at a time, in order.  ``spec["op"]`` is
    ``matmul`` (``B``, ``D``, ``F``, ``dtype``), ``copy`` (``bytes``),
    ``collective`` (``kind``, ``bytes``, ``axis_size``) or ``function``
    (``cells``, ``function``, ``args``: ``[[DTYPE, [DIMS]], ...]``);
    ``spec["method"]`` may turn down ``min_samples``, ``min_seconds``,
    ``warmup`` and ``batch_seconds``.
``{"op": "cancel", "target": ID}``
    → ``{"kind": "cancel_ack"}``; the target's result then says ``cancelled``.
``{"op": "shutdown"}``
    → ``{"kind": "bye"}``, then the worker exits without waiting for a running job.

Cancel and deadlines are cooperative: checked between warm-ups and samples.
A kernel (or a compilation) in flight cannot be interrupted; the client's
backstop is to kill the worker a grace period after the deadline.
"""

from __future__ import annotations

import json
from typing import Any

from server.json_lines import decode as decode  # the object on a protocol line, or None (one reader for both sides)

PROTOCOL = 1
#: Seconds between a worker's heartbeats.
HEARTBEAT_SECONDS = 2.0


def encode(message: dict[str, Any]) -> str:
    """One protocol line (with its newline)."""
    return json.dumps(message, separators=(",", ":")) + "\n"


def request(op: str, ident: str, **fields: Any) -> dict[str, Any]:
    """A client request."""
    return {"v": PROTOCOL, "op": op, "id": ident, **fields}
