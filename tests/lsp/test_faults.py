"""Fault injection against the real server over raw stdio: the editor never goes deaf.

pytest-lsp's client only sends well-formed messages, so these tests drive
``python -m server lsp`` with a small client of their own (:class:`RawServer`)
that can write any bytes: broken frames, invalid params, bad edits, requests
after ``shutdown``.  A failed analysis is injected with the test hook
``MARGIN_TEST_FAIL_ANALYSIS`` (docs/security.md): the analysis of any document
whose text contains its value raises.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.lsp.conftest import WORKSPACE

TIMEOUT_S = 15
FAULT = "BOOM-injected-fault"
Message = dict[str, Any]


class RawServer:
    """The server as a subprocess, spoken to in raw bytes; what it says is queued by a reader thread."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "server", "lsp"], cwd=ROOT, env={**os.environ, **(env or {})},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
        )  # fmt: skip
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        self.seen: list[Message] = []
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        stream = self.process.stdout
        while True:
            headers: dict[bytes, bytes] = {}
            while (line := stream.readline()).strip():
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            if not line:
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(stream.read(int(headers[b"content-length"]))))

    # -- sending ----------------------------------------------------------------------------------
    def raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Message) -> None:
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: object = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: object = None) -> int:
        self._id += 1
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        return self._id

    # -- receiving --------------------------------------------------------------------------------
    def wait_for(self, accept: Callable[[Message], bool], timeout: float = TIMEOUT_S) -> Message:
        for message in self.seen:
            if accept(message):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                found = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            if found is None:
                raise AssertionError(f"the server closed its output; log:\n{self.stderr()}")
            if accept(found):
                return found
            self.seen.append(found)
        raise AssertionError(f"no such message within {timeout} s; log:\n{self.stderr()[-3000:]}")

    def response(self, request_id: int) -> Message:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def call(self, method: str, params: object = None) -> Message:
        return self.response(self.request(method, params))

    def notifications(self, method: str) -> list[Message]:
        """Notifications of ``method`` received so far (after draining what has arrived)."""
        while True:
            try:
                message = self.inbox.get_nowait()
            except queue.Empty:
                break
            if message is not None:
                self.seen.append(message)
        return [m for m in self.seen if m.get("method") == method]

    def diagnostics(self, uri: str, version: int) -> list[Message]:
        def published(m: Message) -> bool:
            params = m.get("params") or {}
            return m.get("method") == "textDocument/publishDiagnostics" and (params.get("uri"), params.get("version")) == (uri, version)  # fmt: skip

        return list(self.wait_for(published)["params"]["diagnostics"])

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    # -- life cycle -------------------------------------------------------------------------------
    def initialize(self) -> None:
        root = WORKSPACE.as_uri()
        result = self.call("initialize", {"processId": None, "rootUri": root, "capabilities": {}})
        assert "result" in result, result
        self.notify("initialized", {})

    def open(self, name: str, text: str, version: int = 1) -> str:
        uri = (WORKSPACE / name).as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": version, "text": text}})  # fmt: skip
        return uri

    def alive(self) -> None:
        """The server still answers (a request that needs no document)."""
        assert "result" in self.call("margin/serverStats", {})

    def exit_code(self, timeout: float = TIMEOUT_S) -> int:
        return self.process.wait(timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()


@pytest.fixture
def server() -> Any:
    started = RawServer({"MARGIN_TEST_FAIL_ANALYSIS": FAULT})
    started.initialize()
    yield started
    started.stop()


def _params(uri: str, **more: object) -> dict[str, object]:
    return {"textDocument": {"uri": uri}, **more}


GOOD = "```calc\nt = 2 s\n```\n\nIt takes `t = 2 s`.\n"
BAD = f"# {FAULT}\n\n```calc\nt = 2 s\n```\n\n## Problem 1\n\nIt takes `t = 2 s`.\n"


# -- 1. a failed analysis answers everything ---------------------------------------------------------


def test_a_failed_analysis_answers_waiting_requests_and_says_so_once(server: RawServer) -> None:
    uri = server.open("fault.md", BAD)
    position = {"line": 3, "character": 0}
    waiting = [
        server.request("textDocument/hover", _params(uri, position=position)),
        server.request("textDocument/documentSymbol", _params(uri)),
        server.request("textDocument/codeLens", _params(uri)),
    ]
    answers = [server.response(i) for i in waiting]
    assert [a.get("result") for a in answers] == [None, [], []], answers
    found = server.diagnostics(uri, 1)
    assert [d["code"] for d in found] == ["E999"]
    assert "internal error" in found[0]["message"] and "please report" in found[0]["message"]
    # A second failure (a new version) is published too, but the user is told only once.
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": BAD + "\nmore\n"}]})  # fmt: skip
    assert [d["code"] for d in server.diagnostics(uri, 2)] == ["E999"]
    # The server is not stuck: another document is analysed as usual.
    other = server.open("fine.md", GOOD)
    assert server.diagnostics(other, 1) == []
    shown = server.notifications("window/showMessage")
    assert len(shown) == 1 and "internal error" in shown[0]["params"]["message"], shown
    assert "RuntimeError" in server.stderr()  # the traceback is in the log


# -- 2. the protocol --------------------------------------------------------------------------------


HOVER = json.dumps({"jsonrpc": "2.0", "id": 9001, "method": "margin/serverStats", "params": {}}).encode()
FRAMINGS = {
    "short length": b"Content-Length: %d\r\n\r\n" % (len(HOVER) - 7) + HOVER,
    "long length": b"Content-Length: %d\r\n\r\n" % (len(HOVER) + 25) + HOVER,
    "missing length": b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + HOVER,
    "non-numeric length": b"Content-Length: ten\r\n\r\n" + HOVER,
    "negative length": b"Content-Length: -5\r\n\r\n" + HOVER,
    "garbage line": b"hello there\r\n" + b"Content-Length: %d\r\n\r\n" % len(HOVER) + HOVER,
    "huge length": b"Content-Length: 99999999999999999\r\n\r\n" + HOVER,
    "not json": b"Content-Length: 9\r\n\r\n{not json",
    "not utf-8": b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc",
}


@pytest.mark.parametrize("fault", sorted(FRAMINGS))
def test_after_a_framing_error_the_server_answers_the_next_valid_message(fault: str) -> None:
    server = RawServer()
    try:
        server.initialize()
        server.raw(FRAMINGS[fault])
        server.alive()
        server.alive()  # and keeps answering
        assert server.process.poll() is None
    finally:
        server.stop()


@pytest.mark.parametrize(
    "header", [b"content-length: %d\r\n\r\n", b"Content-Length: %d\n\n", b"Content-Length:%d\r\n\r\n"]
)
def test_lenient_headers_are_read(header: bytes) -> None:
    server = RawServer()
    try:
        server.initialize()
        body = json.dumps({"jsonrpc": "2.0", "id": 77, "method": "margin/serverStats", "params": {}}).encode()
        server.raw(header % len(body) + body)
        assert "result" in server.response(77)
    finally:
        server.stop()


def test_invalid_params_get_invalid_params_and_errors_carry_no_traceback(server: RawServer) -> None:
    missing = server.call("textDocument/hover", {"textDocument": {"uri": "file:///x.md"}})
    assert missing["error"]["code"] == -32602, missing
    assert "position" in missing["error"]["message"]
    negative = server.call("textDocument/hover", _params("file:///x.md", position={"line": -1, "character": 0}))
    assert negative["error"]["code"] == -32602, negative
    failed = server.call(
        "textDocument/rename", _params("file:///x.md", position={"line": 0, "character": 0}, newName="not a name")
    )
    assert "error" in failed
    for answer in (missing, negative, failed):
        text = json.dumps(answer["error"])
        assert "Traceback" not in text and 'File \\"' not in text and "traceback" not in text, text
    server.alive()


def test_after_shutdown_requests_are_invalid_and_exit_is_clean(server: RawServer) -> None:
    assert server.call("shutdown")["result"] is None
    late = server.call("margin/serverStats", {})
    assert late["error"]["code"] == -32600, late
    server.notify("exit")
    assert server.exit_code() == 0


def test_exit_without_shutdown_exits_1(server: RawServer) -> None:
    server.notify("exit")
    assert server.exit_code() == 1


def _change(uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> dict[str, object]:
    edit = {"range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}, "text": text}  # fmt: skip
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]}


@pytest.mark.parametrize("bad", ["end before start", "negative"])
def test_an_edit_that_cannot_be_applied_stops_checking_until_the_text_is_sent_again(
    server: RawServer, bad: str
) -> None:
    uri = server.open(f"edit-{bad.replace(' ', '-')}.md", GOOD)
    assert server.diagnostics(uri, 1) == []
    change = (
        _change(uri, 2, (1, 4), (1, 0), "9") if bad == "end before start" else _change(uri, 2, (-1, 0), (0, 0), "x")
    )
    server.notify("textDocument/didChange", change)
    # Nothing is answered from a text that may differ from the editor's: no diagnostics, no hover.
    assert server.wait_for(lambda m: m.get("method") == "window/showMessage")["params"]["type"] == 2
    cleared = server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)  # fmt: skip
    assert cleared["params"]["diagnostics"] == []
    hover = server.call("textDocument/hover", _params(uri, position={"line": 1, "character": 0}))
    assert hover["result"] is None
    # The whole text again (as after reopening) brings it back.
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": GOOD + "\nAnd `2 * 3 = 7`.\n"}]})  # fmt: skip
    assert [d["code"] for d in server.diagnostics(uri, 3)] == ["C001"]


# -- the reader alone: any split of the stream, junk between frames ---------------------------------


def _bodies(stream: bytes, sizes: list[int]) -> list[bytes]:
    """What :class:`FrameReader` reads from ``stream`` delivered in chunks of ``sizes`` (cycled)."""
    import asyncio

    from server.lsp.transport import FrameReader

    chunks = []
    offset, turn = 0, 0
    while offset < len(stream):
        size = max(1, sizes[turn % len(sizes)])
        chunks.append(stream[offset : offset + size])
        offset, turn = offset + size, turn + 1
    feed = iter([*chunks, b""])

    async def read() -> bytes:
        return next(feed, b"")

    async def collect() -> list[bytes]:
        frames, found = FrameReader(read), []
        while (body := await frames.next_body()) is not None:
            try:
                json.loads(body)
            except ValueError:
                frames.reread(body, "not JSON")
                continue
            found.append(body)
        return found

    return asyncio.run(collect())


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(max_size=40), min_size=1, max_size=6),
    junk=st.lists(st.binary(max_size=30).filter(lambda b: b"ength" not in b.lower()), min_size=1, max_size=6),
    sizes=st.lists(st.integers(1, 50), min_size=1, max_size=5),
)
def test_the_reader_recovers_every_frame_after_junk_whatever_the_chunks(
    texts: list[str], junk: list[bytes], sizes: list[int]
) -> None:
    bodies = [json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"t": t}}).encode() for t in texts]
    stream = b"".join(junk[i % len(junk)] + b"Content-Length: %d\r\n\r\n" % len(b) + b for i, b in enumerate(bodies))
    assert _bodies(stream, sizes) == bodies


def test_an_unreadable_answer_to_our_request_does_not_stall_the_server() -> None:
    server = RawServer()
    try:
        result = server.call("initialize", {"processId": None, "rootUri": WORKSPACE.as_uri(), "capabilities": {"workspace": {"configuration": True}}})  # fmt: skip
        assert "result" in result
        server.notify("initialized", {})
        asked = server.wait_for(lambda m: m.get("method") == "workspace/configuration")
        server.send({"jsonrpc": "2.0", "id": asked["id"], "result": 5})  # not a list of settings
        uri = server.open("after-bad-answer.md", GOOD + "\nAnd `2 * 3 = 7`.\n")
        assert [d["code"] for d in server.diagnostics(uri, 1)] == ["C001"]
    finally:
        server.stop()
