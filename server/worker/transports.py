"""Targets: where measurements run, from ``[tool.margin.targets]``, and the command that reaches each host.

```toml
[tool.margin.targets.gpu]            # ssh to one host
hosts = ["me@gpu-box"]
python = "/opt/venv/bin/python"      # the remote interpreter, with margin and jax[cuda12] installed
chip = "h100"                        # which catalog chip this target's device is

[tool.margin.targets.v5e]            # a TPU VM: one connection per host (worker)
transport = "gcloud-tpu"
tpu = "my-tpu"
zone = "us-west4-a"
workers = 4
python = "~/venv/bin/python"
chip = "tpu_v5e"
```

Transports:

``local``
    a subprocess of this machine (``processes = 2`` makes a local gang, for tests).
``ssh``
    ``ssh -T -o BatchMode=yes -o ConnectTimeout=… -o ServerAliveInterval=5
    -o ServerAliveCountMax=2 -o ControlMaster=auto -o ControlPersist=60 HOST
    'exec PYTHON -u -m server.worker …'``: never prompts, gives up on a dead
    network, reuses one connection per host; exit status 255 is ssh's own
    failure (cannot connect, authentication refused), any other is the worker's.
``gcloud-tpu``
    ``gcloud compute tpus tpu-vm ssh TPU --worker=I --command='exec PYTHON …'
    -- <the ssh options above>``, one connection per host of the TPU VM.
``ray``
    one Ray actor per node of a running Ray cluster (``address = "auto"`` or
    ``"ray://HEAD:10001"``; ``--on ray:auto`` and ``--on ray://HEAD:10001`` need no
    table), see :mod:`server.worker.ray_client`; needs ``margin[ray]``.

A target with several hosts is a gang: every host's worker joins one
``jax.distributed`` job (``coordinator``, default the first host on port
8476; a local gang picks a free port; ``coordinator = "auto"`` lets JAX find
it, as on a TPU pod).  A bare string is an ssh host: ``gpu = "me@gpu-box"``.
"""

from __future__ import annotations

import os
import shlex
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.worker.client import describe_exit

TRANSPORTS = ("local", "ssh", "gcloud-tpu", "ray")
#: The port of process 0 in a multi-host gang when the target names none.
COORDINATOR_PORT = 8476
_KEYS = {
    "transport", "host", "hosts", "python", "chip", "processes", "workers", "tpu", "zone", "project",
    "ssh_options", "coordinator", "cpu_devices", "connect_timeout", "heartbeat", "deadline", "grace", "restarts",
    "address", "resources",
}  # fmt: skip


@dataclass(frozen=True)
class Target:
    """A named place to measure: how to start a worker on each of its hosts."""

    name: str
    transport: str = "local"
    hosts: tuple[str, ...] = ()
    #: The worker's interpreter (local: this one).
    python: str = ""
    #: The catalog chip this target's devices are (``measure_*(..., h100)`` asks for one).
    chip: str = ""
    #: Processes of a local gang; hosts of a TPU VM (``workers``).
    processes: int = 1
    tpu: str = ""
    zone: str = ""
    project: str = ""
    ssh_options: tuple[str, ...] = ()
    coordinator: str = ""
    cpu_devices: int = 0
    connect_timeout: int = 10
    #: Seconds between the worker's heartbeats; the client gives up after 3 missed ones.
    heartbeat: float = 2.0
    #: Seconds one measurement may take.
    deadline: float = 600.0
    #: Seconds past the deadline before the worker is killed (a kernel in flight cannot be interrupted).
    grace: float = 10.0
    #: Times a failed gang is restarted before the measurement is reported as failed.
    restarts: int = 1
    env: dict[str, str] = field(default_factory=dict)
    #: Ray: the cluster (``auto``, or ``ray://HEAD:PORT`` for Ray Client).
    address: str = ""
    #: Ray: how many nodes (0: every node with the resources).
    ray_hosts: int = 0
    #: Ray: what a host must have, and what its actor holds (``{GPU = 8}``).
    resources: tuple[tuple[str, float], ...] = ()

    @property
    def size(self) -> int:
        """How many workers (hosts, or local processes) this target starts."""
        if self.transport == "ssh":
            return len(self.hosts)
        if self.transport == "ray":
            return self.ray_hosts or 1  # known once the cluster is asked (server/worker/ray_client.py)
        return self.processes

    @property
    def heartbeat_timeout(self) -> float:
        """Seconds of silence after which a worker is taken for dead."""
        return 3 * self.heartbeat + 1.0

    def host(self, index: int) -> str:
        """What host ``index`` is called in messages."""
        if self.transport == "ssh":
            return self.hosts[index]
        if self.transport == "gcloud-tpu":
            return f"{self.tpu} worker {index}"
        if self.transport == "ray":
            return f"Ray host {index}"
        return "this machine" if self.size == 1 else f"local process {index}"

    def worker_args(self, index: int, coordinator: str | None) -> list[str]:
        """The worker's own options for host ``index``."""
        args = ["--heartbeat", f"{self.heartbeat:g}"]
        if self.cpu_devices:
            args += ["--cpu-devices", str(self.cpu_devices)]
        if coordinator is not None:
            args += ["--coordinator", coordinator, "--num-processes", str(self.size), "--process-id", str(index)]
        return args

    def argv(self, index: int, coordinator: str | None = None) -> list[str]:
        """The command that starts the worker of host ``index``."""
        python = self.python or (sys.executable if self.transport == "local" else "python3")
        worker = [python, "-u", "-m", "server.worker", *self.worker_args(index, coordinator)]
        if self.transport == "local":
            return worker
        remote = "exec " + " ".join(_quote(part) for part in worker)
        if self.transport == "ssh":
            return ["ssh", *self.ssh_flags(), self.hosts[index], remote]
        gcloud = ["gcloud", "compute", "tpus", "tpu-vm", "ssh", self.tpu, f"--worker={index}"]
        gcloud += [f"--zone={self.zone}"] if self.zone else []
        gcloud += [f"--project={self.project}"] if self.project else []
        return [*gcloud, f"--command={remote}", "--", *self.ssh_flags()]

    def ssh_flags(self) -> list[str]:
        """Never prompt, give up on a dead network, reuse one connection per host."""
        options = [
            "BatchMode=yes", f"ConnectTimeout={self.connect_timeout}", "ServerAliveInterval=5",
            "ServerAliveCountMax=2", "ControlMaster=auto", f"ControlPath={control_folder()}/%C", "ControlPersist=60",
        ]  # fmt: skip
        flags = ["-T"]
        for option in options:
            flags += ["-o", option]
        return [*flags, *self.ssh_options]

    def environment(self) -> dict[str, str]:
        """The environment of the local command (ssh or the worker itself)."""
        env = {**os.environ, **self.env}
        if self.transport == "local":
            root = str(Path(__file__).parents[2])
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        return env

    def coordinator_for_start(self) -> str | None:
        """``HOST:PORT`` of process 0 for a gang (a fresh port each start for a local one); None for one host."""
        if self.size <= 1:
            return None
        if self.coordinator:
            return self.coordinator
        if self.transport == "local":
            return f"127.0.0.1:{free_port()}"
        if self.transport == "ssh":
            host = self.hosts[0].rsplit("@", 1)[-1]
            return f"{host}:{COORDINATOR_PORT}"
        return "auto"

    def explain_exit(self, code: int | None) -> str:
        """An exit status in words, with the transport's own meanings (255: ssh failed)."""
        if code == 255 and self.transport in ("ssh", "gcloud-tpu"):
            return "could not be reached: ssh failed to connect or authenticate (exit 255, a transport failure)"
        if code == 127 and self.transport != "local":
            python = self.python or "python3"
            return f"could not be started: command not found on the host (exit 127; is {python} there?)"
        return describe_exit(code)


def _quote(part: str) -> str:
    """Shell-quote for the remote shell, keeping a leading ``~/`` expandable."""
    if part.startswith("~/"):
        return "~/" + shlex.quote(part[2:])
    return shlex.quote(part)


def control_folder() -> str:
    """Where ssh keeps its shared connections (created, private to this user)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "margin", "ssh")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return "/tmp"
    return folder


def free_port() -> int:
    """A TCP port free on this machine now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: This machine, with 8 host devices when it measures on the CPU (so collectives over up to 8 devices run).
LOCAL = Target("local", cpu_devices=8)


def parse_targets(table: dict[str, Any]) -> tuple[dict[str, Target], list[str]]:
    """The targets of ``[tool.margin.targets]`` (plus ``local``), and the problems found in it."""
    targets: dict[str, Target] = {"local": LOCAL}
    problems: list[str] = []
    for name, value in table.items():
        try:
            targets[name] = parse_target(str(name), value)
        except (TypeError, ValueError) as error:
            problems.append(f"targets.{name}: {error}")
    return targets, problems


def find_target(targets: dict[str, Target], name: str) -> Target | None:
    """The target called ``name``: a configured one, or ``ray:auto`` / ``ray://HEAD:PORT`` as written (else None)."""
    if name in targets:
        return targets[name]
    if name == "ray:auto" or (name.startswith("ray://") and len(name) > len("ray://")):
        return Target(name, "ray", address="auto" if name == "ray:auto" else name)
    return None


def parse_target(name: str, value: Any) -> Target:
    """One target from its table (or a bare ssh host string)."""
    if isinstance(value, str):
        return Target(name, "ssh", (value,))
    if not isinstance(value, dict):
        raise TypeError("must be a table (transport, hosts, python, chip ...) or an ssh host")
    unknown = sorted(set(value) - _KEYS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; known: {', '.join(sorted(_KEYS))}")
    if value.get("transport") == "ray" or (not value.get("transport") and "address" in value):
        return _ray_target(name, value)
    hosts = value.get("hosts", [value["host"]] if "host" in value else [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
        raise TypeError("hosts must be a list of ssh destinations")
    transport = value.get("transport") or ("ssh" if hosts else "gcloud-tpu" if "tpu" in value else "local")
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}")
    if "address" in value or "resources" in value:
        raise ValueError('address and resources are for transport = "ray"')
    if transport == "ssh" and not hosts:
        raise ValueError("an ssh target needs hosts = [...]")
    if transport == "gcloud-tpu" and not value.get("tpu"):
        raise ValueError("a gcloud-tpu target needs tpu = NAME")
    options = value.get("ssh_options", [])
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TypeError("ssh_options must be a list of strings")
    numbers = {key: value[key] for key in ("processes", "workers", "cpu_devices", "connect_timeout", "restarts")
               if key in value}  # fmt: skip
    for key, number in numbers.items():
        if isinstance(number, bool) or not isinstance(number, int) or number < (0 if key == "restarts" else 1):
            raise ValueError(f"{key} must be a positive integer")
    _check_seconds(value)
    return Target(
        name, transport, tuple(hosts), str(value.get("python", "")), str(value.get("chip", "")),
        int(numbers.get("workers", numbers.get("processes", 1))), str(value.get("tpu", "")),
        str(value.get("zone", "")), str(value.get("project", "")), tuple(options), str(value.get("coordinator", "")),
        int(numbers.get("cpu_devices", 0)), int(numbers.get("connect_timeout", 10)),
        float(value.get("heartbeat", 2.0)), float(value.get("deadline", 600.0)), float(value.get("grace", 10.0)),
        int(numbers.get("restarts", 1)),
    )  # fmt: skip


def _check_seconds(value: dict[str, Any]) -> None:
    for key in ("heartbeat", "deadline", "grace"):
        if key in value and (isinstance(value[key], bool) or not isinstance(value[key], int | float)
                             or value[key] <= 0):  # fmt: skip
            raise ValueError(f"{key} must be a positive number of seconds")


def _ray_target(name: str, value: dict[str, Any]) -> Target:
    """A ``transport = "ray"`` table: ``address``, ``hosts = N``, ``resources = {GPU = 8}`` and the common keys."""
    address = str(value.get("address", "auto"))
    address = "auto" if address == "ray:auto" else address
    if address != "auto" and not (address.startswith("ray://") and len(address) > len("ray://")):
        raise ValueError('address must be "auto" or "ray://HEAD:PORT" (Ray Client)')
    for key in ("tpu", "zone", "project", "ssh_options", "python", "workers", "processes", "host"):
        if key in value:
            raise ValueError(f"{key} is not a Ray target's key (the cluster's own Python runs the worker)")
    hosts = value.get("hosts", 0)
    if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 0:
        raise ValueError("hosts of a Ray target must be a number of nodes")
    resources = value.get("resources", {})
    if not isinstance(resources, dict) or not all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and v > 0
        for k, v in resources.items()
    ):
        raise ValueError("resources must be a table of positive numbers, e.g. {GPU = 8}")
    for key in ("cpu_devices", "restarts"):
        number = value.get(key, 0)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise ValueError(f"{key} must be a positive integer")
    _check_seconds(value)
    return Target(
        name, "ray", chip=str(value.get("chip", "")), coordinator=str(value.get("coordinator", "")),
        cpu_devices=int(value.get("cpu_devices", 0)), heartbeat=float(value.get("heartbeat", 2.0)),
        deadline=float(value.get("deadline", 600.0)), grace=float(value.get("grace", 10.0)),
        restarts=int(value.get("restarts", 1)), address=address, ray_hosts=hosts,
        resources=tuple(sorted((str(k), float(v)) for k, v in resources.items())),
    )  # fmt: skip
