"""Diagnostics are converted to the protocol's form in the analysis thread, never on the event loop."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from scaling_core import DocumentAnalysis
from server.lsp.documents import Document
from server.lsp.state import State

DRAFT = "```calc\nB = 128\nB * 2 == 257\n```\n"


def test_the_conversion_runs_in_the_analysis_thread_and_reaches_publish(tmp_path: Path) -> None:
    threads: dict[str, str] = {}

    def prepare(document: Document, analysis: DocumentAnalysis) -> list[str]:
        threads["prepare"] = threading.current_thread().name
        return [d.code for d in analysis.diagnostics]

    async def scenario() -> list[object]:
        published = asyncio.Event()
        received: list[object] = []

        def publish(document: Document, analysis: DocumentAnalysis, prepared: object) -> None:
            threads["publish"] = threading.current_thread().name
            received.extend([document.version, prepared])
            published.set()

        state = State(publish, prepare=prepare)
        uri = (tmp_path / "draft.md").as_uri()
        state.documents[uri] = Document(uri, 1, DRAFT)
        state.schedule(uri)
        await asyncio.wait_for(published.wait(), 60)
        return received

    assert asyncio.run(scenario()) == [1, ["C001"]]
    assert threads["prepare"].startswith("margin-analysis")
    assert threads["publish"] == threading.main_thread().name


class Captured:
    """A writer that keeps what is written."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


def _message(data: bytes) -> tuple[int, dict[str, object]]:
    header, _, body = data.partition(b"\r\n\r\n")
    length = int(header.split(b"\r\n")[0].removeprefix(b"Content-Length: "))
    assert length == len(body)
    return length, json.loads(body)


def test_the_notification_made_off_the_loop_is_what_pygls_would_write() -> None:
    from lsprotocol import types

    from scaling_core import analyze_document
    from scaling_core.text import LineIndex
    from server.lsp.app import create_server
    from server.lsp.convert import PositionConverter, diagnostic

    # Failing checks (µ, ≈ and ± in their messages), a note, a related location, an unknown name.
    text = "# Times\n\n```calc\nt = 3 us\nt == 4 us\n```\n\nIt takes 7 µs<!-- ≈ t -->, and 2<!-- = nope -->.\n"
    analysis = analyze_document(text, "/tmp/times.md")
    converter = PositionConverter(LineIndex(text), "utf-16")
    items = [diagnostic(converter, "file:///tmp/times.md", d) for d in analysis.diagnostics]
    assert len(items) >= 3 and any(not i.message.isascii() for i in items)
    params = types.PublishDiagnosticsParams(uri="file:///tmp/times.md", version=7, diagnostics=items)
    server = create_server()
    pygls_way, ours = Captured(), Captured()
    server.protocol.set_writer(pygls_way)
    server.text_document_publish_diagnostics(params)
    server.protocol.set_writer(ours)
    server.protocol.write_encoded(server.protocol.encoded_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params))
    assert _message(ours.data) == _message(pygls_way.data)
