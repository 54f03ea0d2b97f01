"""The Ray transport: targets, node choice, and real measurements on a local Ray cluster (marker ``ray``).

The cluster tests start one real head node (``ray start --head --block``, 2 CPUs, no
dashboard, in a temporary folder) for the module and stop it at the end; they run in
``.ci/run``'s Ray step (``pytest -m ray``), not in the default run.  The unit tests at the
top need no cluster and run everywhere.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from server.worker.gang import Gang, GangFailure
from server.worker.ray_client import actor_options, cause, choose_nodes
from server.worker.transports import Target, find_target, free_port, parse_target, parse_targets
from tests.conftest import ROOT
from tests.measure.conftest import FAST, needs_jax

MATMUL = {"op": "matmul", "B": 64, "D": 64, "F": 64, "dtype": "float32", "method": FAST}
LONG = {**MATMUL, "method": {**FAST, "min_seconds": 60, "max_samples": 10**9}}
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="pip install 'margin[ray]'")


def node(name: str, **resources: float) -> dict[str, object]:
    return {"NodeID": name, "Alive": True, "NodeManagerAddress": name, "Resources": {"CPU": 8.0, **resources}}


# -- targets and node choice (no cluster) ----------------------------------------------------------


def test_ray_targets_need_no_table_and_tables_take_hosts_and_resources() -> None:
    assert find_target({}, "ray:auto") == Target("ray:auto", "ray", address="auto")
    assert find_target({}, "ray://head:10001") == Target("ray://head:10001", "ray", address="ray://head:10001")
    assert find_target({}, "ray:") is None and find_target({}, "ray://") is None and find_target({}, "gpu") is None
    table = {"address": "ray://head:10001", "hosts": 2, "resources": {"GPU": 8}, "chip": "h100"}
    target = parse_target("pod", table)
    assert (target.transport, target.address, target.ray_hosts, target.resources) == (
        "ray", "ray://head:10001", 2, (("GPU", 8.0),)
    )  # fmt: skip
    assert target.size == 2 and target.chip == "h100"
    assert parse_target("here", {"transport": "ray"}).address == "auto"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"transport": "ray", "address": "head:10001"}, 'address must be "auto" or "ray://HEAD:PORT"'),
        ({"transport": "ray", "hosts": ["a"]}, "hosts of a Ray target must be a number of nodes"),
        ({"transport": "ray", "resources": {"GPU": 0}}, "resources must be a table of positive numbers"),
        ({"transport": "ray", "python": "/usr/bin/python3"}, "python is not a Ray target's key"),
        ({"hosts": ["a"], "resources": {"GPU": 1}}, 'address and resources are for transport = "ray"'),
    ],
)
def test_a_bad_ray_target_is_a_problem_naming_the_key(table: object, message: str) -> None:
    targets, problems = parse_targets({"bad": table})
    assert "bad" not in targets and len(problems) == 1 and message in problems[0]


def test_hosts_are_the_nodes_with_accelerators_or_the_resources_asked_for() -> None:
    cpu, gpu_a, gpu_b = node("10.0.0.1"), node("10.0.0.2", GPU=8), node("10.0.0.3", GPU=4)
    dead = {**node("10.0.0.4", GPU=8), "Alive": False}
    here = Target("ray:auto", "ray", address="auto")
    assert choose_nodes(here, [gpu_b, cpu, dead, gpu_a]) == [gpu_a, gpu_b]  # every alive GPU node, in address order
    assert choose_nodes(here, [node("10.0.0.9"), cpu]) == [cpu]  # no accelerator: one node
    eight = Target("t", "ray", resources=(("GPU", 8.0),))
    assert choose_nodes(eight, [cpu, gpu_a, gpu_b]) == [gpu_a]
    with pytest.raises(ValueError, match=r"hosts = 2, but the Ray cluster has 1 node with GPU = 8"):
        choose_nodes(Target("t", "ray", ray_hosts=2, resources=(("GPU", 8.0),)), [gpu_a, gpu_b])
    with pytest.raises(ValueError, match=r"no node of the Ray cluster is with TPU = 4 \(1 alive\)"):
        choose_nodes(Target("t", "ray", resources=(("TPU", 4.0),)), [cpu])


def test_a_tpu_gang_is_one_slice_in_worker_order_and_each_actor_holds_its_hosts_chips() -> None:
    def tpu(name: str, slice_name: str, worker: int) -> dict[str, object]:
        return {**node(name, TPU=4), "Labels": {"slice": slice_name, "ray.io/tpu-worker-id": str(worker)}}

    a1, a0, b0 = tpu("10.0.1.1", "slice-a", 1), tpu("10.0.1.2", "slice-a", 0), tpu("10.0.0.9", "slice-b", 0)

    def slice_of(n: dict[str, object]) -> str:
        return str(n["Labels"]["slice"])  # type: ignore[index]

    here = Target("ray:auto", "ray", address="auto")
    assert choose_nodes(here, [a1, a0, b0], slice_of) == [b0]  # the first slice (by address): b's only host
    assert choose_nodes(here, [a1, a0], slice_of) == [a0, a1]
    assert choose_nodes(here, [a1, a0]) == [a1, a0]  # without ray.util.tpu: plain nodes
    assert actor_options(here, a0) == {"num_cpus": 1.0, "max_restarts": 0, "max_task_retries": 0,
                                       "resources": {"TPU": 4.0}}  # fmt: skip
    assert actor_options(here, node("g", GPU=8))["num_gpus"] == 8.0  # Ray shows an actor only the GPUs it holds
    assert "num_gpus" not in actor_options(here, node("c"))


def test_ray_s_long_death_notices_are_one_line() -> None:
    notice = RuntimeError(
        "The actor died unexpectedly before finishing this task.\n\tclass_name: RayHost\n\tpid: 1\n"
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit "
        "detail: Worker unexpectedly exits with a connection error code 2. End of file. Some common causes ..."
    )
    assert cause(notice) == "its worker process has died (exit type SYSTEM_ERROR)"
    assert cause(RuntimeError("Version mismatch: ...\nmore")) == "Version mismatch: ..."


def test_a_ray_target_without_ray_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray gives: ImportError
    with pytest.raises(
        GangFailure, match=r"^ray:auto: a Ray target needs Ray in this environment: pip install 'margin\[ray\]'"
    ):
        Gang(Target("ray:auto", "ray", address="auto", restarts=0)).measure(MATMUL, 10)


@needs_ray
def test_nothing_on_the_start_up_paths_imports_ray() -> None:
    modules = ["server.launch", "server.cli", "server.check_command", "server.measure_command", "server.lsp.app",
               "server.worker.gang", "server.worker.transports", "server.worker.ray_client"]  # fmt: skip
    code = f"import sys\nfor m in {modules!r}: __import__(m)\nprint('ray' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr


# -- a real local cluster ------------------------------------------------------------------------


@dataclass
class Cluster:
    """A running local Ray cluster: its GCS address (``ray:auto`` through RAY_ADDRESS) and its Ray Client address."""

    address: str
    client: str


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """One head node for the module (2 CPUs, no dashboard), stopped with its whole process group at the end."""
    folder = tempfile.mkdtemp(prefix="mray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    gcs, client = free_port(), free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT)}
    log_path = Path(folder) / "start.log"
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", f"--port={gcs}",
               "--node-ip-address=127.0.0.1", f"--ray-client-server-port={client}", "--num-cpus=2",
               "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={folder}"]  # fmt: skip
    with log_path.open("w") as log:
        head = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    previous = os.environ.get("RAY_ADDRESS")
    try:
        until = time.monotonic() + 120
        while "Ray runtime started" not in log_path.read_text(errors="replace"):
            if head.poll() is not None or time.monotonic() > until:
                pytest.fail(f"the local Ray cluster did not start:\n{log_path.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        os.environ["RAY_ADDRESS"] = f"127.0.0.1:{gcs}"
        yield Cluster(f"127.0.0.1:{gcs}", f"ray://127.0.0.1:{client}")
    finally:
        if "ray" in sys.modules:
            sys.modules["ray"].shutdown()  # the driver first: it must not outlive the cluster it talks to
        if previous is None:
            os.environ.pop("RAY_ADDRESS", None)
        else:
            os.environ["RAY_ADDRESS"] = previous
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(head.pid, sig)
                head.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(folder, ignore_errors=True)


def kill_actor_when_busy(gang: Gang) -> None:
    """SIGKILL the (first) host's actor process once it is measuring."""

    def later() -> None:
        until = time.monotonic() + 60
        while time.monotonic() < until:
            worker = gang.workers[0] if gang.workers else None
            if worker is not None and worker.pid is not None:
                time.sleep(1.0)  # accepted, compiled, sampling
                os.kill(worker.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    threading.Thread(target=later, daemon=True).start()


@pytest.mark.ray
@needs_jax
@needs_ray
def test_a_measurement_on_ray_auto_has_provenance_and_an_actor_killed_mid_run_is_one_clear_failure(
    cluster: Cluster,
) -> None:
    gang = Gang(Target("ray:auto", "ray", address="auto", restarts=0))
    try:
        done = gang.measure(MATMUL, 120)
        assert done.result["n"] >= 3 and done.result["median_s"] > 0
        provenance = done.provenance
        assert (provenance["transport"], provenance["target"], provenance["device_kind"]) == ("ray", "ray:auto", "cpu")
        assert provenance["jax"] and provenance["jaxlib"] and provenance["ray"] and provenance["host"]
        assert provenance["pid"] != os.getpid()  # it ran in the actor, not here
        kill_actor_when_busy(gang)
        with pytest.raises(GangFailure) as raised:
            gang.measure(LONG, 120)
        message = str(raised.value)
        assert (
            message.startswith("ray:auto (Ray node ")
            and "): the worker's Ray actor died before it answered: " in message
        )
        assert "\n" not in message and len(message) < 300
        assert gang.measure(MATMUL, 120).result["n"] >= 3  # a new actor answers
    finally:
        gang.close()


@pytest.mark.ray
@needs_jax
@needs_ray
def test_an_actor_dying_mid_run_restarts_the_gang(cluster: Cluster, tmp_path: Path) -> None:
    mark = tmp_path / "died-once"
    cells = [
        "import os\n"
        "def f(x):\n"
        f"    if not os.path.exists({str(mark)!r}):\n"
        f"        open({str(mark)!r}, 'w').close()\n"
        "        os._exit(9)  # the actor's process dies in the middle of the job, once\n"
        "    return x * 2\n"
    ]
    spec = {"op": "function", "cells": cells, "function": "f", "args": [["float32", [64]]], "method": FAST}
    gang = Gang(Target("ray:auto", "ray", address="auto", restarts=1))
    try:
        done = gang.measure(spec, 120)
    finally:
        gang.close()
    assert mark.exists() and done.restarts == 1 and done.provenance["restarts"] == 1
    assert done.result["n"] >= 3


DRAFT = """# Matmul

```calc
t = measure_matmul(f32[64, 64], f32[64, 64])
t.median < 10 s
```
"""


@pytest.mark.ray
@needs_jax
@needs_ray
def test_margin_measure_through_ray_client_fills_the_cache_as_a_local_target_does(
    cluster: Cluster, tmp_path: Path
) -> None:
    (tmp_path / "draft.md").write_text(DRAFT, "utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RAY_ADDRESS", None)
    fast = ["--samples", "3", "--min-seconds", "0", "--warmup", "1"]
    measured = subprocess.run([sys.executable, "-m", "server", "measure", "--on", cluster.client, *fast], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert measured.returncode == 0, measured.stderr[-3000:]
    assert measured.stdout.startswith("draft.md:4:5: measure_matmul(f32[64, 64], f32[64, 64]) on cpu: median ")
    cache = json.loads((tmp_path / ".margin" / "measurements.json").read_text("utf-8"))
    [devices] = cache["entries"].values()
    entry = devices["cpu"]
    assert entry["request"] == {"op": "matmul", "B": 64, "D": 64, "F": 64, "dtype": "float32"}
    assert entry["site"] == {"path": "draft.md", "call": "measure_matmul(f32[64, 64], f32[64, 64])"}
    provenance = entry["provenance"]
    assert (provenance["transport"], provenance["target"]) == ("ray", cluster.client)
    assert provenance["device_kind"] == "cpu" and provenance["method"]["min_samples"] == 3 and provenance["ray"]
    assert len(entry["result"]["samples"]) == entry["result"]["n"] >= 3
    check = subprocess.run([sys.executable, "-m", "server", "check", "draft.md"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert check.returncode == 0 and "0 failed" in check.stdout
