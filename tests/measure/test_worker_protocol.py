"""margin worker: JSON lines on stdin/stdout, logs on stderr, exits when stdin closes (driven over a real pipe)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from server.worker.protocol import PROTOCOL
from tests.conftest import ROOT
from tests.measure.conftest import FAST, needs_jax

pytestmark = needs_jax
MATMUL = {"op": "matmul", "B": 64, "D": 64, "F": 64, "dtype": "float32", "method": FAST}


class Pipe:
    """A worker process and its protocol lines."""

    def __init__(self, *command: str) -> None:
        self.process = subprocess.Popen(
            list(command or (sys.executable, "-u", "-m", "server.worker")) + ["--heartbeat", "0.5"], cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"v": 1, **message}) + "\n")
        self.process.stdin.flush()

    def line(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        text = self.process.stdout.readline()
        assert text, "the worker closed its output"
        return json.loads(text)  # every stdout line must be protocol

    def until(self, ident: str, kind: str) -> list[dict[str, Any]]:
        """Lines up to the first of ``kind`` for ``ident`` (heartbeats included)."""
        seen = []
        while True:
            message = self.line()
            seen.append(message)
            if message.get("id") == ident and message.get("kind") == kind:
                return seen


@pytest.fixture(scope="module")
def pipe() -> Iterator[Pipe]:
    made = Pipe()
    yield made
    made.process.kill()
    made.process.wait()


def test_ready_says_where_it_runs(pipe: Pipe) -> None:
    ready = pipe.line()
    assert ready["kind"] == "ready" and ready["protocol"] == PROTOCOL and ready["import_jax_s"] > 0
    provenance = ready["provenance"]
    assert provenance["device_kind"] == "cpu" and provenance["device_count"] >= 1
    assert provenance["jax"] and provenance["jaxlib"] and provenance["host"] and provenance["process_count"] == 1
    pipe.send({"op": "hello", "id": "h"})
    assert pipe.until("h", "hello")[-1]["provenance"] == provenance


def test_a_measurement_is_accepted_started_and_timed(pipe: Pipe) -> None:
    pipe.send({"op": "measure", "id": "m1", "deadline": 60, "spec": MATMUL})
    lines = pipe.until("m1", "result")
    kinds = [line["kind"] for line in lines if line.get("id") == "m1"]
    assert kinds == ["accepted", "started", "result"]
    reply = lines[-1]
    assert reply["ok"] is True, reply
    result = reply["result"]
    assert result["n"] == len(result["samples"]) >= 3
    assert 0 < result["min_s"] <= result["median_s"] <= result["p90_s"] and result["compile_s"] > 0
    assert reply["provenance"]["date"].endswith("Z")


def test_heartbeats_say_what_is_running(pipe: Pipe) -> None:
    slow = {**MATMUL, "method": {**FAST, "min_seconds": 1.5, "max_samples": 10**9}}  # runs its 1.5 s
    pipe.send({"op": "measure", "id": "m2", "deadline": 60, "spec": slow})
    lines = pipe.until("m2", "result")
    assert {"heartbeat"} <= {line["kind"] for line in lines}
    assert any(line["kind"] == "heartbeat" and line["busy"] == "m2" for line in lines)


def test_cancel_and_deadline_end_a_measurement_and_the_worker_keeps_serving(pipe: Pipe) -> None:
    forever = {
        **MATMUL,
        "method": {**FAST, "min_seconds": 60, "max_samples": 10**9},
    }  # only a cancel or deadline ends it
    pipe.send({"op": "measure", "id": "m3", "deadline": 120, "spec": forever})
    pipe.until("m3", "started")
    pipe.send({"op": "cancel", "id": "c1", "target": "m3"})
    lines = pipe.until("m3", "result")
    assert any(line.get("kind") == "cancel_ack" for line in lines)
    assert lines[-1]["ok"] is False and lines[-1]["error"]["type"] == "cancelled"
    pipe.send({"op": "measure", "id": "m4", "deadline": 0.5, "spec": forever})
    reply = pipe.until("m4", "result")[-1]
    assert reply.get("error", {}).get("type") == "deadline", reply
    assert "deadline (0.5 s)" in reply["error"]["message"]
    pipe.send({"op": "ping", "id": "p"})
    assert pipe.until("p", "pong")[-1]["busy"] is None


def test_what_the_authors_code_prints_never_reaches_the_protocol(pipe: Pipe) -> None:
    cells = ["print('hello from a block')\ndef f(x):\n    print('tracing')\n    return x * 2\n"]
    spec = {"op": "function", "cells": cells, "function": "f", "args": [["float32", [256]]], "method": FAST}
    pipe.send({"op": "measure", "id": "m5", "deadline": 60, "spec": spec})
    assert pipe.until("m5", "result")[-1]["ok"] is True  # every line parsed as JSON on the way


def test_a_failing_function_is_an_error_result_not_a_dead_worker(pipe: Pipe) -> None:
    cells = ["def f(x):\n    return x @ x\n"]
    spec = {"op": "function", "cells": cells, "function": "f", "args": [["float32", [3, 4]]], "method": FAST}
    pipe.send({"op": "measure", "id": "m6", "deadline": 60, "spec": spec})
    error = pipe.until("m6", "result")[-1]["error"]
    assert error["type"] == "TypeError" and "dot_general" in error["message"]


def test_a_line_that_is_not_json_is_answered_and_ignored(pipe: Pipe) -> None:
    assert pipe.process.stdin is not None
    pipe.process.stdin.write("this is not json\n")
    pipe.process.stdin.flush()
    while (line := pipe.line())["kind"] == "heartbeat":
        pass
    assert line == {"kind": "error", "message": "a request that is not a JSON object"}


def test_shutdown_says_bye_and_exits_and_so_does_closing_stdin(pipe: Pipe) -> None:
    pipe.send({"op": "shutdown", "id": "s"})
    pipe.until("s", "bye")
    assert pipe.process.wait(timeout=10) == 0
    other = Pipe(sys.executable, "-u", "-m", "server", "worker")  # `margin worker`
    assert other.line()["kind"] == "ready"
    assert other.process.stdin is not None
    started = time.monotonic()
    other.process.stdin.close()
    assert other.process.wait(timeout=10) == 0 and time.monotonic() - started < 5
