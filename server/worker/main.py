"""``margin worker`` (or ``python -m server.worker``): measures kernels on this machine's devices.

It speaks the protocol of :mod:`server.worker.protocol` on stdin/stdout and
exits when stdin closes.  It imports only the standard library and JAX (and
``server.analysis.child`` to run a draft's python calc blocks for
``measure(f, ...)``), so a remote host needs Margin and JAX installed, nothing
else.  Three threads: the main one reads requests (hello, ping, cancel and
shutdown are answered at once), one runs measurements one at a time, one sends
heartbeats.

In a gang (several hosts measuring together), each worker is started with
``--coordinator HOST:PORT --num-processes N --process-id I`` and initialises
``jax.distributed`` before it says ``ready``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import queue
import socket
import sys
import threading
import time
import traceback
from collections import OrderedDict
from typing import Any, Protocol

from server.worker.protocol import HEARTBEAT_SECONDS, PROTOCOL, decode, encode


class Stopped(Exception):
    """A measurement was cancelled or ran past its deadline (``kind`` says which)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Stream(Protocol):
    """Where the worker's protocol lines go: its stdout, or a Ray actor's outbox."""

    def write(self, text: str, /) -> int:
        """Write protocol text (whole lines)."""

    def flush(self) -> None:
        """Deliver what was written."""


class Worker:
    """The worker's state: the job queue, the running job, the protocol stream."""

    def __init__(self, out: Stream, heartbeat: float) -> None:
        self.out = out
        self.heartbeat = heartbeat
        self.lock = threading.Lock()
        self.jobs: queue.Queue[dict[str, Any]] = queue.Queue()
        self.busy: str | None = None
        self.cancelled: set[str] = set()
        self.provenance: dict[str, Any] = {}
        self.programs: OrderedDict[tuple[str, ...], dict[str, Any]] = OrderedDict()

    def send(self, message: dict[str, Any]) -> None:
        """Write one protocol line (from any thread)."""
        with self.lock:
            self.out.write(encode(message))
            self.out.flush()

    # -- threads -----------------------------------------------------------------------
    def beat(self) -> None:
        """Send a heartbeat every ``self.heartbeat`` seconds, forever."""
        while True:
            time.sleep(self.heartbeat)
            self.send({"kind": "heartbeat", "busy": self.busy, "t": time.time()})

    def work(self) -> None:
        """Run queued measurements one at a time."""
        while True:
            job = self.jobs.get()
            ident = str(job.get("id"))
            self.busy = ident
            self.send({"id": ident, "kind": "started"})
            try:
                reply = self.run(job)
            finally:
                self.busy = None
            self.send({"id": ident, "kind": "result", **reply})

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """One measurement: ``ok`` with the result and provenance, or the error."""
        ident = str(job.get("id"))
        ends = float(job["received"]) + float(job.get("deadline") or 3600.0)

        def should_stop() -> None:
            if ident in self.cancelled:
                raise Stopped("cancelled", "the measurement was cancelled")
            if time.monotonic() > ends:
                raise Stopped("deadline", f"the measurement ran past its deadline ({job.get('deadline')} s)")

        try:
            should_stop()
            spec = dict(job.get("spec") or {})
            namespace = self.program(spec) if spec.get("op") == "function" else None
            from server.worker import timing  # already imported at start-up: JAX is loaded

            result = timing.measure(spec, should_stop, namespace)
        except Stopped as stop:
            return {"ok": False, "error": {"type": stop.kind, "message": str(stop)}}
        except Exception as error:  # the measurement failed: say why, keep serving
            lines = traceback.format_exception(type(error), error, error.__traceback__)
            message = f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
            return {"ok": False, "error": {"type": type(error).__name__, "message": message,
                                           "traceback": "".join(lines[-6:])}}  # fmt: skip
        finally:
            self.cancelled.discard(ident)
        return {"ok": True, "result": result, "provenance": {**self.provenance, "date": _now()}}

    def program(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The namespace of a draft's python calc blocks, run once per content (a few kept)."""
        from server.analysis.child import MODULE, run_cell

        cells = tuple(str(cell) for cell in spec.get("cells", ()))
        namespace = self.programs.get(cells)
        if namespace is None:
            namespace = {"__name__": MODULE, "__builtins__": __builtins__}
            for index, source in enumerate(cells):
                report = run_cell(source, index, namespace)
                if report["outcome"] != "ok":
                    raise RuntimeError(f"python calc block {index + 1} did not run: {report['message']}")
            self.programs[cells] = namespace
            while len(self.programs) > 4:
                self.programs.popitem(last=False)
        return namespace

    # -- requests ----------------------------------------------------------------------
    def receive(self, line: str) -> bool:
        """Answer one protocol line (a line that is not a JSON object is answered with an error); False: exit."""
        message = decode(line)
        if message is None:
            self.send({"kind": "error", "message": "a request that is not a JSON object"})
            return True
        return self.handle(message)

    def handle(self, message: dict[str, Any]) -> bool:
        """Answer one request; False when the worker should exit."""
        op, ident = message.get("op"), message.get("id")
        if op == "shutdown":
            self.send({"id": ident, "kind": "bye"})
            return False
        if op == "hello":
            self.send({"id": ident, "kind": "hello", "provenance": self.provenance})
        elif op == "ping":
            self.send({"id": ident, "kind": "pong", "busy": self.busy})
        elif op == "cancel":
            self.send({"id": ident, "kind": "cancel_ack"})  # first: the target's result comes after the ack
            self.cancelled.add(str(message.get("target")))
        elif op == "measure":
            self.send({"id": ident, "kind": "accepted"})
            self.jobs.put({**message, "received": time.monotonic()})
        else:
            self.send({"id": ident, "kind": "error", "message": f"unknown op {op!r}"})
        return True


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(jax: Any) -> dict[str, Any]:
    """Where and with what a measurement runs: host, devices, versions."""
    local = jax.local_devices()
    return {
        "host": socket.gethostname(), "python": sys.version.split()[0], "executable": sys.executable,
        "jax": jax.__version__, "jaxlib": _version("jaxlib"), "libtpu": _version("libtpu"),
        "cuda_plugin": _version("jax-cuda12-plugin") or _version("jax-cuda13-plugin"),
        "margin": _version("margin"), "backend": jax.default_backend(), "device_kind": local[0].device_kind,
        "device_count": jax.device_count(), "local_device_count": len(local),
        "process_index": jax.process_index(), "process_count": jax.process_count(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""), "pid": os.getpid(),
    }  # fmt: skip


def start_jax(args: argparse.Namespace) -> Any:
    """Import JAX, set the CPU device count, join the gang; returns the module."""
    jax: Any = importlib.import_module("jax")  # untyped here: its annotations differ across the supported versions
    if args.cpu_devices:
        jax.config.update("jax_num_cpu_devices", args.cpu_devices)
    if args.coordinator:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU gangs (tests); ignored on accelerators
        timeouts = {"initialization_timeout": args.join_timeout, "heartbeat_timeout_seconds": args.join_timeout}
        if args.coordinator == "auto":  # a TPU pod or a cluster JAX detects by itself
            jax.distributed.initialize(**timeouts)
        else:
            jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id, **timeouts)
    import server.worker.timing  # noqa: F401 - the measurement code, loaded before 'ready'

    return jax


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The worker's options."""
    parser = argparse.ArgumentParser(prog="margin worker", description="Measure kernels; JSON lines on stdio.")
    parser.add_argument("--heartbeat", type=float, default=HEARTBEAT_SECONDS, help="seconds between heartbeats")
    parser.add_argument("--cpu-devices", type=int, default=0, help="host (CPU) devices to ask XLA for")
    parser.add_argument("--coordinator", help="HOST:PORT of process 0 in a multi-host gang ('auto': JAX finds it)")
    parser.add_argument("--num-processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--join-timeout", type=int, default=30, help="seconds to wait for the gang's other hosts")
    return parser.parse_args(argv)


def begin(worker: Worker, args: argparse.Namespace) -> int | None:
    """Import JAX (join the gang), say ``ready`` (or why not), start heartbeats and jobs; an exit code on failure.

    The one start-up of every worker: ``main`` below, and a Ray actor (:mod:`server.worker.ray_host`).
    """
    started = time.perf_counter()
    try:
        jax = start_jax(args)
        worker.provenance = provenance(jax)
    except ImportError as error:
        name = getattr(error, "name", None) or str(error)
        worker.send({"kind": "ready", "protocol": PROTOCOL, "error": f"module '{name}' is not installed for "
                     f"{sys.executable} on {socket.gethostname()}"})  # fmt: skip
        return 3
    except Exception as error:  # jax.distributed could not join the gang, a bad device count ...
        worker.send({"kind": "ready", "protocol": PROTOCOL, "error": f"{type(error).__name__}: {error}"[:500]})
        return 3
    worker.send({"kind": "ready", "protocol": PROTOCOL, "import_jax_s": round(time.perf_counter() - started, 3),
                 "provenance": worker.provenance})  # fmt: skip
    threading.Thread(target=worker.beat, daemon=True).start()
    threading.Thread(target=worker.work, daemon=True).start()
    return None


def main(argv: list[str] | None = None) -> int:
    """Serve requests until stdin closes (or ``shutdown``)."""
    args = parse(argv)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything else written to stdout (JAX, C libraries, the author's print) goes to stderr
    sys.stdout = sys.stderr
    worker = Worker(protocol, args.heartbeat)
    code = begin(worker, args)
    if code is not None:
        return code
    for line in sys.stdin:
        if not worker.receive(line):
            break
    sys.stderr.flush()
    os._exit(0)  # never wait for a running job (a kernel cannot be interrupted) or JAX's atexit handlers


if __name__ == "__main__":
    sys.exit(main())
