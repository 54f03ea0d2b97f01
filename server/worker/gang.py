"""A gang: one worker per host of a target, all running the same request, all or nothing.

Multi-host JAX is a gang: every host must run the same program, and a host
that dies leaves the others waiting in a collective until JAX's own heartbeat
gives up (minutes) and aborts them.  So the gang does not wait: the first
failure of any worker (exit, EOF, garbage, a missing heartbeat, a deadline)
kills every worker, and the whole gang is started again, up to
``target.restarts`` times, before the measurement is reported as failed with
the first failure's message.  Only process 0's result is kept (with a
barrier in every sample it is the slowest host's time); the others' results
only say they finished.  A single-host target is a gang of one, with the
same restart rule.

A measurement the worker itself reports as failed (:class:`MeasureError`:
the author's function raised, a cooperative deadline) is not restarted; in a
gang of several the workers are stopped anyway, since the others may be
waiting at a barrier for the one that failed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from server.worker.client import MeasureError, WorkerFailure, WorkerLink, WorkerProcess
from server.worker.transports import Target

#: Seconds a gang's workers have to import JAX and join (``jax.distributed``) before they are taken for dead.
START_SECONDS = 180.0


@dataclass
class GangResult:
    """Process 0's result and provenance, and how many restarts it took."""

    result: dict[str, Any]
    provenance: dict[str, Any]
    restarts: int = 0
    #: Every host's provenance (process 0 first).
    hosts: list[dict[str, Any]] = field(default_factory=list)


class GangFailure(Exception):
    """The gang failed even after its restarts; the message is the first failure's."""


class Gang:
    """The workers of one target, started lazily and restarted as a whole."""

    def __init__(self, target: Target, *, start_seconds: float = START_SECONDS) -> None:
        self.target = target
        self.start_seconds = start_seconds
        self.workers: list[WorkerLink] = []
        #: Total restarts since this gang was made (tests and reports read it).
        self.restarts = 0

    @property
    def running(self) -> bool:
        """Whether every worker is up."""
        return bool(self.workers) and all(worker.alive for worker in self.workers)

    def start(self) -> list[dict[str, Any]]:
        """Start every host's worker (all at once: they join each other) and wait until all are ready."""
        self.stop()
        self.workers = links(self.target, self.start_seconds)
        try:
            for worker in self.workers:
                worker.spawn()
            return self._together(lambda worker: worker.wait_ready(self.start_seconds))
        except WorkerFailure:
            self.stop()
            raise

    def stop(self) -> None:
        """Kill every worker."""
        for worker in self.workers:
            worker.kill()
        self.workers = []

    def close(self) -> None:
        """Shut every worker down politely (then kill what remains)."""
        for worker in self.workers:
            worker.close()
        self.workers = []

    def measure(self, spec: dict[str, Any], deadline: float | None = None) -> GangResult:
        """Run ``spec`` on every host; restart the whole gang on a worker failure."""
        target = self.target
        deadline = deadline or target.deadline
        attempts = 0
        while True:
            try:
                if not self.running:
                    self.start()
                replies = self._together(
                    lambda w: w.measure(spec, deadline, target.heartbeat_timeout, grace=target.grace)
                )
            except WorkerFailure as failure:
                self.stop()
                if attempts >= target.restarts:
                    tried = f" (after {attempts} restart{'s' if attempts != 1 else ''} of the gang)" if attempts else ""
                    raise GangFailure(f"{failure}{tried}") from None
                attempts += 1
                self.restarts += 1
                continue
            except MeasureError:
                if len(self.workers) > 1:
                    self.stop()
                raise
            first = replies[0]
            hosts = [dict(reply.get("provenance") or {}) for reply in replies]
            provenance = {**hosts[0], "restarts": attempts, "target": target.name, "transport": target.transport}
            return GangResult(dict(first.get("result") or {}), provenance, attempts, hosts)

    def _together(self, job: Any) -> list[Any]:
        """Run ``job(worker)`` for every worker at once; the first failure kills them all and is raised."""
        if len(self.workers) == 1:
            return [job(self.workers[0])]
        results: list[Any] = [None] * len(self.workers)
        errors: list[BaseException] = []
        lock = threading.Lock()

        def run(index: int, worker: WorkerLink) -> None:
            try:
                results[index] = job(worker)
            except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
                with lock:
                    first = not errors
                    errors.append(error)
                if first:
                    for other in self.workers:
                        if other is not worker:
                            other.kill()  # the others would wait for this one at a barrier

        threads = [threading.Thread(target=run, args=(i, w), daemon=True) for i, w in enumerate(self.workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return results


def links(target: Target, start_seconds: float) -> list[WorkerLink]:
    """One link per host of ``target`` (not started): a command per host, or a Ray actor per node."""
    if target.transport == "ray":
        from server.worker.ray_client import ray_links  # Ray is imported only when a Ray target is used

        return ray_links(target, start_seconds)
    coordinator = target.coordinator_for_start()
    env = target.environment()
    return [
        WorkerProcess(target.argv(i, coordinator), f"{target.name} ({target.host(i)})", env=env,
                      explain_exit=target.explain_exit)
        for i in range(target.size)
    ]  # fmt: skip
