"""The Ray transport: one Ray actor per host runs the worker loop; the gang, deadlines and cache are shared.

A target ``ray:auto`` (this machine is in a running Ray cluster: ``ray.init(address="auto")``,
which also reads ``RAY_ADDRESS``) or ``ray://HEAD:10001`` (Ray Client, from outside the
cluster), or a table of ``[tool.margin.targets]`` with ``transport = "ray"``.  Ray is imported
here only, when such a target measures (``margin[ray]``); nothing on the command line's or
the language server's start-up path imports this module.

Hosts: the alive nodes that have the target's ``resources`` (default: the nodes with TPUs,
else those with GPUs, else one node), at most ``hosts`` of them when it is set.  TPU nodes
are grouped by slice with ``ray.util.tpu`` where it exists (one gang = one slice's hosts,
ordered by TPU worker id); without it they are plain nodes.  Each host gets one actor
(:class:`server.worker.ray_host.RayHost`) pinned to its node, holding the node's GPUs or
TPUs (Ray makes only the devices an actor holds visible to it), so JAX in the actor sees
every local device.  A gang of several hosts joins ``jax.distributed`` at a port the first
host's actor picks on its node (``coordinator`` overrides; on TPU slices JAX finds it:
``auto``).

The link (:class:`RayLink`) feeds the actor's protocol lines into the shared reader of
:class:`~server.worker.client.WorkerLink` by polling the actor, so missing heartbeats,
deadlines and the gang's kill-and-restart are the other transports'.  An actor that dies
(its process killed, its node lost) ends the stream: the gang kills every actor
(``ray.kill``) and creates them again.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from server.worker.client import WorkerFailure, WorkerLink
from server.worker.protocol import encode
from server.worker.transports import Target

#: Seconds one poll of an actor's outbox waits for a line (heartbeats come every 2 s).
POLL_SECONDS = 1.0
_ACCELERATORS = ("TPU", "GPU")
_connected: dict[str, str] = {}
_lock = threading.Lock()


def load_ray(name: str) -> Any:
    """The ``ray`` module, or a :class:`WorkerFailure` (target ``name``) saying how to install it."""
    try:
        return importlib.import_module("ray")  # untyped here: used through its documented calls only
    except ImportError:
        raise WorkerFailure(f"{name}: a Ray target needs Ray in this environment: pip install 'margin[ray]'") from None


def connect(target: Target) -> Any:
    """Connect this process to the target's cluster (once); returns the ``ray`` module."""
    ray = load_ray(target.name)
    address = target.address or "auto"
    with _lock:
        if ray.is_initialized():
            if _connected and _connected.get("address") != address:
                raise WorkerFailure(f"{target.name}: this process is connected to the Ray cluster at "
                                    f"{_connected['address']}; one cluster per process")  # fmt: skip
            return ray
        try:
            ray.init(address=address, namespace="margin", log_to_driver=False, logging_level=logging.WARNING)
        except Exception as error:  # noqa: BLE001 - no cluster, a refused connection, a version mismatch ...
            said = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise WorkerFailure(f"{target.name}: could not connect to the Ray cluster at {address}: {said}") from None
        _connected["address"] = address
    return ray


def _accelerator(node: dict[str, Any]) -> str:
    resources = node.get("Resources") or {}
    return next((kind for kind in _ACCELERATORS if resources.get(kind, 0) > 0), "")


def choose_nodes(
    target: Target, nodes: list[dict[str, Any]], slice_of: Callable[[dict[str, Any]], str | None] | None = None
) -> list[dict[str, Any]]:
    """The nodes of ``ray.nodes()`` the target's hosts run on (process 0 first); ``ValueError`` says why none."""
    alive = sorted((n for n in nodes if n.get("Alive")), key=lambda n: str(n.get("NodeManagerAddress", "")))
    wanted = dict(target.resources)
    if wanted:
        chosen = [n for n in alive if all((n.get("Resources") or {}).get(k, 0) >= v for k, v in wanted.items())]
        what = "with " + ", ".join(f"{k} = {v:g}" for k, v in wanted.items())
    else:
        kind = next((k for k in _ACCELERATORS if any(_accelerator(n) == k for n in alive)), "")
        chosen = [n for n in alive if _accelerator(n) == kind] if kind else alive[:1]
        what = f"with a {kind}" if kind else "alive"
    if not chosen:
        raise ValueError(f"no node of the Ray cluster is {what} ({len(alive)} alive)")
    if slice_of is not None and any(_accelerator(n) == "TPU" for n in chosen):
        first = slice_of(chosen[0])
        if first:  # one gang = one TPU slice's hosts, in TPU worker order
            chosen = sorted((n for n in chosen if slice_of(n) == first), key=_tpu_worker)
    if target.ray_hosts:
        if target.ray_hosts > len(chosen):
            raise ValueError(f"hosts = {target.ray_hosts}, but the Ray cluster has {len(chosen)} node"
                             f"{'s' if len(chosen) != 1 else ''} {what}")  # fmt: skip
        chosen = chosen[: target.ray_hosts]
    return chosen


def _tpu_worker(node: dict[str, Any]) -> int:
    label = (node.get("Labels") or {}).get("ray.io/tpu-worker-id", "")
    return int(label) if str(label).isdigit() else 0


def actor_options(target: Target, node: dict[str, Any]) -> dict[str, Any]:
    """How much of its node a host's actor holds: the target's ``resources``, or the node's accelerators."""
    resources = {k: float(v) for k, v in target.resources} or {
        kind: float((node.get("Resources") or {})[kind]) for kind in _ACCELERATORS if _accelerator(node) == kind
    }
    options: dict[str, Any] = {"num_cpus": resources.pop("CPU", 1.0), "max_restarts": 0, "max_task_retries": 0}
    if "GPU" in resources:
        options["num_gpus"] = resources.pop("GPU")
    if resources:
        options["resources"] = resources
    return options


def ray_links(target: Target, start_seconds: float) -> list[WorkerLink]:
    """One link per host of ``target``, each with its actor created on its node (not yet started)."""
    ray = connect(target)
    tpu = importlib.util.find_spec("ray.util.tpu") is not None
    slice_of = getattr(importlib.import_module("ray.util.tpu"), "get_tpu_slice_name_from_node", None) if tpu else None
    try:
        nodes = choose_nodes(target, ray.nodes(), slice_of)
    except ValueError as error:
        raise WorkerFailure(f"{target.name}: {error}") from None
    pin = importlib.import_module("ray.util.scheduling_strategies").NodeAffinitySchedulingStrategy
    host_class = _host_class(ray)
    sized = dataclasses.replace(target, ray_hosts=len(nodes))
    actors = []
    for node in nodes:
        placement = pin(node_id=node["NodeID"], soft=False)
        actors.append(host_class.options(scheduling_strategy=placement, **actor_options(target, node)).remote())
    coordinator = None
    if len(nodes) > 1:
        coordinator = target.coordinator or ("auto" if _accelerator(nodes[0]) == "TPU" else None)
        if coordinator is None:
            try:
                coordinator = str(ray.get(actors[0].free_port.remote(), timeout=start_seconds))
            except Exception as error:  # noqa: BLE001 - not scheduled in time, or died
                for actor in actors:
                    ray.kill(actor, no_restart=True)
                raise WorkerFailure(f"{target.name}: the first host's Ray actor did not start within "
                                    f"{start_seconds:g} s: {cause(error)}") from None  # fmt: skip
    return [
        RayLink(ray, actor, sized.worker_args(i, coordinator), f"{target.name} ({_describe(node)})")
        for i, (actor, node) in enumerate(zip(actors, nodes))
    ]


def _host_class(ray: Any) -> Any:
    """:class:`RayHost` as a Ray actor class whose polls run in a thread of their own (``outbox``).

    So a poll never waits behind a request, nor a request behind a poll, and requests still run
    one at a time, in order.  The group is set with ``ray.method`` here (Ray Client refuses it as
    a call option), which keeps ``ray_host.py`` free of Ray.
    """
    from server.worker.ray_host import RayHost

    class MarginHost(RayHost):
        @ray.method(concurrency_group="outbox")  # type: ignore[untyped-decorator]  # ray is untyped here
        def poll(self, seconds: float) -> list[str]:
            """The protocol lines written since the last poll."""
            return self.outbox.take(seconds)

    return ray.remote(concurrency_groups={"outbox": 1})(MarginHost)


def _describe(node: dict[str, Any]) -> str:
    return f"Ray node {node.get('NodeManagerHostname') or node.get('NodeManagerAddress', '?')}"


def cause(error: BaseException) -> str:
    """Why a Ray call failed, in one line (Ray's messages run to a page)."""
    text = str(error).strip()
    because = re.search(r"The actor is dead because (.*?)\.(?:\s|$)", text)
    said = because.group(1) if because else (text.splitlines()[0] if text else type(error).__name__)
    kind = re.search(r"Worker exit type: (\w+)", text)
    return said + (f" (exit type {kind.group(1)})" if kind else "")


class RayLink(WorkerLink):
    """One host's worker in a Ray actor: requests are ``receive`` calls, replies come from ``poll``."""

    def __init__(self, ray: Any, actor: Any, args: list[str], label: str) -> None:
        super().__init__(label)
        self.ray = ray
        self.actor = actor
        self.args = args
        self._stopped = False
        self._ended = False
        self._cause = ""

    def spawn(self) -> None:
        """Start the worker in the actor (JAX's import, the gang's join) and read its outbox from now on."""
        self.actor.start.remote(self.args)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        try:
            while not self._stopped:
                for line in self.ray.get(self.actor.poll.remote(POLL_SECONDS)):
                    self.lines.put(line)
        except Exception as error:  # noqa: BLE001 - the actor died, was killed, or Ray shut down
            self._cause = self._cause or cause(error)
        finally:
            self._ended = True
            self.lines.end()

    @property
    def alive(self) -> bool:
        """Whether the actor has not been stopped and its outbox is still read."""
        return not self._stopped and not self._ended

    @property
    def pid(self) -> int | None:
        """The actor's process id on its node (from its ``ready``)."""
        pid = (self.ready.get("provenance") or {}).get("pid")
        return int(pid) if isinstance(pid, int) else None

    def send(self, message: dict[str, Any]) -> None:
        """Hand one request to the actor (in order: one request at a time, after ``start``)."""
        if self._stopped:
            raise WorkerFailure(f"{self.label}: the worker is not running")
        try:
            self.actor.receive.remote(encode(message))
        except Exception as error:  # noqa: BLE001 - Ray shut down, the connection to the cluster lost
            raise WorkerFailure(f"{self.label}: could not reach the worker's Ray actor: {cause(error)}") from None

    def kill(self) -> None:
        """Kill the actor (``ray.kill``; idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self._cause = self._cause or "it was stopped"
        try:
            self.ray.kill(self.actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone, or Ray shut down
            pass

    def _died(self, when: str) -> WorkerFailure:
        said = self._cause or "its outbox could not be read"
        self.kill()
        return WorkerFailure(f"{self.label}: the worker's Ray actor died {when}: {said}")
