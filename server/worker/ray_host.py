"""The worker as a Ray actor: the same loop as ``margin worker``, its stdin and stdout replaced by method calls.

This module runs on the Ray cluster's nodes, inside one actor per host
(:mod:`server.worker.ray_client` creates them).  It does not import Ray: the
client wraps :class:`RayHost` with ``ray.remote`` when a Ray target is used.
The actor keeps a :class:`~server.worker.main.Worker`, so requests, jobs,
heartbeats and JAX's start-up are those of the stdin/stdout worker; only the
stream differs:

``start(args)``
    the worker's command-line options (as :meth:`transports.Target.worker_args`
    gives them); imports JAX, joins the gang, and puts ``ready`` (or why not)
    in the outbox, then starts heartbeats and the job thread.
``receive(line)``
    one protocol line from the client (what the worker would read on stdin).
``poll(seconds)``
    the protocol lines written since the last poll, waiting up to ``seconds``
    for the first one (what the client would read on stdout).  The client
    calls it in a loop, in a concurrency group of its own (set by the client
    with ``ray.method``), so a poll never waits behind a request, nor a
    request behind a poll.
``free_port()``
    a TCP port free on this actor's node: process 0 of a gang is the
    ``jax.distributed`` coordinator, so its port is chosen where it runs.
"""

from __future__ import annotations

import importlib
import queue
import socket
import sys
import time
from typing import Any

from server.worker.main import Worker, begin, parse


class Outbox:
    """A worker's protocol stream kept in memory until the client polls it."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str] = queue.Queue()

    def write(self, text: str, /) -> int:
        """Queue each line of ``text`` (the worker writes whole lines, under its lock)."""
        for line in text.splitlines(keepends=True):
            self.lines.put(line)
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: the lines are queued."""

    def take(self, seconds: float) -> list[str]:
        """The queued lines, waiting up to ``seconds`` for the first one."""
        try:
            taken = [self.lines.get(timeout=max(0.0, seconds))]
        except queue.Empty:
            return []
        while True:
            try:
                taken.append(self.lines.get_nowait())
            except queue.Empty:
                return taken


class RayHost:
    """One host's worker inside a Ray actor (wrapped with ``ray.remote`` by the client)."""

    def __init__(self) -> None:
        self.outbox = Outbox()
        self.worker: Worker | None = None
        self.exit_code: int | None = None

    def start(self, args: list[str]) -> int | None:
        """Import JAX, join the gang, say ``ready``; the exit code the worker would have (None: serving)."""
        options = parse(args)
        self.worker = Worker(self.outbox, options.heartbeat)
        self.exit_code = begin(self.worker, options)
        ray = sys.modules.get("ray")
        if ray is not None:  # where the result was measured: a result's provenance is read when it is sent
            self.worker.provenance["ray"] = getattr(ray, "__version__", None)
        return self.exit_code

    def receive(self, line: str) -> bool:
        """Answer one protocol line; False after ``shutdown``."""
        if self.worker is None or self.exit_code is not None:
            return False
        return self.worker.receive(line)

    def poll(self, seconds: float) -> list[str]:
        """The protocol lines written since the last poll (waits up to ``seconds`` for one)."""
        return self.outbox.take(seconds)

    def free_port(self) -> str:
        """``HOST:PORT`` on this node, for the gang's ``jax.distributed`` coordinator."""
        with socket.socket() as probe:
            probe.bind(("", 0))
            port = int(probe.getsockname()[1])
        return f"{node_address()}:{port}"

    def ping(self) -> float:
        """The actor is up (its clock, for logs)."""
        return time.time()


def node_address() -> str:
    """This node's address as the other nodes reach it (Ray's own idea of it when Ray is loaded)."""
    try:
        ray: Any = importlib.import_module("ray")  # loaded already: this runs inside a Ray actor
        return str(ray.util.get_node_ip_address())
    except Exception:  # noqa: BLE001 - outside Ray: the host's own address
        return socket.gethostbyname(socket.gethostname())
