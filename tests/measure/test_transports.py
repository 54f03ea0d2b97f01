"""Targets and transports: local, ssh and gcloud-tpu commands, parsed from [tool.margin.targets].

ssh and gcloud are the fake ones of conftest.py (they run the remote command on this machine).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from server.worker.gang import Gang
from server.worker.transports import LOCAL, Target, parse_target, parse_targets
from tests.measure.conftest import FAST, needs_jax

MATMUL = {"op": "matmul", "B": 64, "D": 64, "F": 64, "dtype": "float32", "method": FAST}


def test_ssh_never_prompts_gives_up_on_a_dead_network_and_reuses_connections() -> None:
    target = parse_target("gpu", {"hosts": ["me@gpu-box"], "python": "/opt/venv/bin/python", "chip": "h100"})
    argv = target.argv(0)
    assert argv[:2] == ["ssh", "-T"] and argv[-2] == "me@gpu-box"
    options = {argv[i + 1].split("=")[0]: argv[i + 1].split("=", 1)[1] for i, a in enumerate(argv) if a == "-o"}
    assert options["BatchMode"] == "yes" and options["ConnectTimeout"] == "10"
    assert options["ServerAliveInterval"] == "5" and options["ServerAliveCountMax"] == "2"
    assert options["ControlMaster"] == "auto" and options["ControlPersist"] == "60"
    assert shlex.split(argv[-1])[:5] == ["exec", "/opt/venv/bin/python", "-u", "-m", "server.worker"]
    assert (target.transport, target.chip, target.size) == ("ssh", "h100", 1)


def test_gcloud_opens_one_connection_per_tpu_host() -> None:
    target = parse_target("v5e", {"transport": "gcloud-tpu", "tpu": "my-tpu", "zone": "us-west4-a", "workers": 4,
                                  "python": "~/venv/bin/python"})  # fmt: skip
    argv = target.argv(3, "auto")
    assert argv[:7] == ["gcloud", "compute", "tpus", "tpu-vm", "ssh", "my-tpu", "--worker=3"]
    assert "--zone=us-west4-a" in argv
    command = next(a for a in argv if a.startswith("--command=")).removeprefix("--command=")
    assert command.startswith("exec ~/venv/bin/python -u -m server.worker")  # ~ stays expandable
    assert "--process-id 3" in command and "--num-processes 4" in command and "--coordinator auto" in command
    assert argv[argv.index("--") + 1 :][:3] == ["-T", "-o", "BatchMode=yes"]


def test_a_local_target_is_this_interpreter_and_a_local_gang_gets_a_coordinator() -> None:
    assert LOCAL.argv(0)[:4] == [sys.executable, "-u", "-m", "server.worker"]
    pair = parse_target("pair", {"processes": 2})
    assert pair.size == 2 and pair.coordinator_for_start().startswith("127.0.0.1:")
    assert LOCAL.coordinator_for_start() is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"transport": "slurm"}, "transport must be one of local, ssh, gcloud-tpu"),
        ({"transport": "ssh"}, "an ssh target needs hosts"),
        ({"transport": "gcloud-tpu"}, "a gcloud-tpu target needs tpu"),
        ({"hosts": "gpu-box"}, "hosts must be a list"),
        ({"hosts": ["a"], "heartbeat": 0}, "heartbeat must be a positive number"),
        ({"hsots": ["a"]}, "unknown key 'hsots'"),
        (3, "must be a table"),
    ],
)
def test_a_bad_target_is_a_problem_naming_the_key(table: object, message: str) -> None:
    targets, problems = parse_targets({"bad": table})
    assert "bad" not in targets and len(problems) == 1
    assert problems[0].startswith("targets.bad: ") and message in problems[0]


def test_a_bare_string_is_an_ssh_host() -> None:
    targets, problems = parse_targets({"box": "me@box"})
    assert problems == [] and targets["box"].hosts == ("me@box",) and "local" in targets


@needs_jax
def test_a_measurement_over_ssh_runs_the_remote_python_and_reports_provenance(fake_remote: Path) -> None:
    target = Target("box", "ssh", ("me@box",), python=sys.executable)
    gang = Gang(target)
    try:
        done = gang.measure(MATMUL, 60)
    finally:
        gang.close()
    assert done.result["n"] >= 3 and done.provenance["device_kind"] == "cpu"
    assert done.provenance["transport"] == "ssh" and done.provenance["target"] == "box"
    logged = fake_remote.read_text("utf-8")
    assert "-o BatchMode=yes" in logged and "me@box exec " in logged


@needs_jax
def test_a_measurement_over_gcloud_tpu_runs_on_the_named_worker(fake_remote: Path) -> None:
    target = parse_target("tpu", {"transport": "gcloud-tpu", "tpu": "my-tpu", "python": sys.executable})
    gang = Gang(target)
    try:
        done = gang.measure(MATMUL, 60)
    finally:
        gang.close()
    assert done.result["median_s"] > 0
    assert "gcloud compute tpus tpu-vm ssh my-tpu --worker=0 --command=exec " in fake_remote.read_text("utf-8")
