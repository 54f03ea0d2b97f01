"""Faults: each ends in one clear message, and the next measurement still works.

Real workers (real JAX on the CPU); ssh is the fake of conftest.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from server.measurements import MeasurementCache, read_entries
from server.worker.gang import Gang, GangFailure
from server.worker.transports import Target
from tests.conftest import ROOT
from tests.measure.conftest import FAST, executable, needs_jax

MATMUL = {"op": "matmul", "B": 64, "D": 64, "F": 64, "dtype": "float32", "method": FAST}
LONG = {**MATMUL, "method": {**FAST, "min_seconds": 60, "max_samples": 10**9}}


def failure(gang: Gang, spec: dict[str, object], deadline: float = 60) -> str:
    with pytest.raises(GangFailure) as raised:
        gang.measure(spec, deadline)
    return str(raised.value)


def kill_when_busy(gang: Gang, sig: int) -> threading.Thread:
    """Send ``sig`` to the (first) worker once it is measuring."""

    def later() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            worker = gang.workers[0] if gang.workers else None
            if worker is not None and worker.ready:
                time.sleep(1.0)  # accepted, compiled, sampling
                assert worker.pid is not None
                os.kill(worker.pid, sig)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=later, daemon=True)
    thread.start()
    return thread


@needs_jax
def test_a_worker_killed_mid_run_is_reported_and_the_next_measurement_starts_a_new_one() -> None:
    gang = Gang(Target("local", restarts=0))
    try:
        kill_when_busy(gang, signal.SIGKILL)
        message = failure(gang, LONG)
        assert message == "local (this machine): the worker was killed by signal SIGKILL before it answered"
        assert gang.measure(MATMUL, 60).result["n"] >= 3  # still answers
    finally:
        gang.close()


@needs_jax
def test_a_worker_that_stops_sending_heartbeats_is_killed() -> None:
    gang = Gang(Target("local", heartbeat=0.5, restarts=0))
    try:
        kill_when_busy(gang, signal.SIGSTOP)  # a frozen host: no output at all
        message = failure(gang, LONG)
        assert message == "local (this machine): the worker sent no heartbeat for 2.5 s; it was stopped"
    finally:
        gang.close()


@needs_jax
def test_a_worker_hanging_past_its_deadline_is_stopped() -> None:
    cells = [
        "import time\ndef f(x):\n    time.sleep(600)  # while JAX traces it: nothing can interrupt\n    return x\n"
    ]
    spec = {"op": "function", "cells": cells, "function": "f", "args": [["float32", [8]]], "method": FAST}
    gang = Gang(Target("local", grace=0.5, restarts=0))
    try:
        message = failure(gang, spec, deadline=1.0)
        assert (
            message == "local (this machine): the measurement did not finish within its deadline (1 s); it was stopped"
        )
    finally:
        gang.close()


def test_a_worker_printing_garbage_is_stopped(tmp_path: Path) -> None:
    motd = executable(tmp_path / "python", "#!/bin/sh\necho 'Welcome to the cluster!'\nsleep 60\n")
    gang = Gang(Target("box", python=str(motd), restarts=0))
    message = failure(gang, MATMUL)
    assert message == "box (this machine): the worker printed a line that is not protocol: 'Welcome to the cluster!'"
    assert not gang.running


def test_a_command_that_is_not_found_says_so_locally_and_over_ssh(fake_remote: Path) -> None:
    local = Gang(Target("local", python="/nonexistent/python3", restarts=0))
    assert failure(local, MATMUL) == "local (this machine): command not found: /nonexistent/python3"
    remote = Gang(Target("box", "ssh", ("me@box",), python="/nonexistent/python3", restarts=0))
    message = failure(remote, MATMUL)
    assert message.startswith(
        "box (me@box): the worker could not be started: command not found on the host "
        "(exit 127; is /nonexistent/python3 there?) before it answered"
    )


def test_ssh_exit_255_is_a_transport_failure_and_says_so(fake_remote: Path) -> None:
    gang = Gang(Target("box", "ssh", ("unreachable.example",), python=sys.executable, restarts=1))
    message = failure(gang, MATMUL)
    assert message == (
        "box (unreachable.example): the worker could not be reached: ssh failed to connect or authenticate "
        "(exit 255, a transport failure) before it answered; it said: ssh: connect to host unreachable.example "
        "port 22: Connection refused (after 1 restart of the gang)"
    )


@needs_jax
def test_when_one_of_two_jax_distributed_processes_dies_the_gang_is_restarted(tmp_path: Path) -> None:
    mark = tmp_path / "died-once"
    cells = [
        "import os, jax\n"
        "def f(x):\n"
        f"    if jax.process_index() == 1 and not os.path.exists({str(mark)!r}):\n"
        f"        open({str(mark)!r}, 'w').close()\n"
        "        os._exit(9)  # process 1 dies in the middle of the job, once\n"
        "    return x * 2\n"
    ]
    spec = {"op": "function", "cells": cells, "function": "f", "args": [["float32", [64]]], "method": FAST}
    gang = Gang(Target("pair", processes=2, restarts=1))
    try:
        done = gang.measure(spec, 120)
    finally:
        gang.close()
    assert mark.exists() and done.restarts == 1 and done.provenance["restarts"] == 1
    assert done.provenance["process_count"] == 2 and len(done.hosts) == 2
    assert done.result["n"] >= 3


WRITER = """
import sys
from pathlib import Path
from scaling_core.measured import MeasureRequest
from scaling_core.text import Span
from server.measurements import MeasurementCache

cache = MeasurementCache(Path(sys.argv[1]))
samples = [1e-3 + i * 1e-9 for i in range(5000)]
for i in range(10**6):
    request = MeasureRequest({"op": "copy", "bytes": i + 1}, "", "d.md", f"measure_copy({i + 1})", Span(0, 1))
    cache.record(request, "cpu", {"median_s": 1e-3, "cv": 0.01, "n": 2000, "samples": samples}, {"date": str(i)})
    cache.save()
    print(i, flush=True)
"""


def test_the_cache_survives_a_kill_during_a_write(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    path = tmp_path / ".margin" / "measurements.json"
    mid_write = 0
    for round_ in range(4):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env, stdout=subprocess.PIPE,
                                  text=True)  # fmt: skip
        assert writer.stdout is not None
        for _ in range(2 + round_):  # a few complete writes first
            writer.stdout.readline()
        until = time.monotonic() + 10
        while time.monotonic() < until:  # then kill it while the next write is under way
            if any(_size(p) > 0 for p in path.parent.glob(".measurements.json.*.margin-tmp")):
                mid_write += 1
                break
            time.sleep(0.0005)
        writer.kill()
        writer.wait()
        entries, problem = read_entries(path)
        assert problem == "" and len(entries) >= 2 + round_, f"round {round_}: {problem}"
        json.loads(path.read_text("utf-8"))
    assert mid_write >= 2  # most kills landed in the middle of a write
    cache = MeasurementCache(tmp_path)
    assert cache.problem == ""
    cache.save()  # the next writer clears what killed ones left behind
    assert sorted(p.name for p in path.parent.iterdir()) == [
        ".gitignore",
        "measurements.json",
        "measurements.json.lock",
    ]


def _size(path: Path) -> int:
    """The size of a writer's temporary file, 0 once the writer has renamed it away (a race the test loses at times)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def test_a_cancel_is_acknowledged_before_the_measurement_can_see_it() -> None:
    """The protocol promises the ack, then the cancelled result: the ack is written before the flag is raised.

    (Raised first, the measuring thread could write its ``cancelled`` result before the ack: CI saw it once.)
    """
    from server.worker.main import Worker

    class Written:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write(self, text: str, /) -> int:
            self.lines.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    out = Written()
    worker = Worker(out, heartbeat=1.0)
    written_when_raised: list[list[str]] = []

    class Flags(set[str]):
        def add(self, target: str) -> None:
            written_when_raised.append(list(out.lines))
            super().add(target)

    worker.cancelled = Flags()
    worker.handle({"v": 1, "op": "cancel", "id": "c1", "target": "m3"})
    assert worker.cancelled == {"m3"}
    assert [json.loads(line)["kind"] for line in written_when_raised[0]] == ["cancel_ack"]
