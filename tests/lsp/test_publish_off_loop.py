"""Diagnostics are converted to the protocol's form in the analysis thread, never on the event loop."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from scaling_core import DocumentAnalysis
from server.lsp.documents import Document
from server.lsp.published import DiagnosticsJson
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


def _published_both_ways(text: str, path: str, version: int, made: DiagnosticsJson | None = None) -> list[object]:
    """The publishDiagnostics message of ``text`` as pygls writes it and as the server makes it off the loop."""
    from lsprotocol import types

    from scaling_core import analyze_document
    from scaling_core.text import LineIndex
    from server.lsp.app import create_server
    from server.lsp.convert import PositionConverter, diagnostic

    analysis = analyze_document(text, path)
    converter = PositionConverter(LineIndex(text), "utf-16")
    uri = Path(path).as_uri()
    items = [diagnostic(converter, uri, d) for d in analysis.diagnostics]
    params = types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=items)
    server = create_server()
    pygls_way, ours = Captured(), Captured()
    server.protocol.set_writer(pygls_way)
    server.text_document_publish_diagnostics(params)
    made = made or DiagnosticsJson(server.protocol._converter.unstructure)
    body = made.notification(uri, version, converter, analysis.diagnostics)
    server.protocol.set_writer(ours)
    server.protocol.write_encoded(server.protocol.framed(body))
    return [_message(ours.data), _message(pygls_way.data), len(items)]


def test_the_notification_made_off_the_loop_is_what_pygls_would_write() -> None:
    # Failing checks (µ, ≈ and ± in their messages), a note, a related location, an unknown name.
    text = "# Times\n\n```calc\nt = 3 us\nt == 4 us\n```\n\nIt takes 7 µs<!-- ≈ t -->, and 2<!-- = nope -->.\n"
    ours, pygls_way, count = _published_both_ways(text, "/tmp/times.md", 7)
    assert ours == pygls_way and count >= 3


def test_each_golden_draft_publishes_what_pygls_would_write_version_after_version() -> None:
    from server.lsp.app import create_server

    made = DiagnosticsJson(create_server().protocol._converter.unstructure)
    golden = sorted((Path(__file__).parent.parent / "golden").rglob("*.md"))
    assert len(golden) > 40
    with_related = 0
    for path in golden:
        text = path.read_text("utf-8")
        # Twice, then edited above its diagnostics: the second and third versions reuse what the first made.
        for version, draft in enumerate((text, text, "Typed first.\n\n" + text)):
            ours, pygls_way, _count = _published_both_ways(draft, str(path), version, made)
            assert ours == pygls_way, path
        with_related += '"relatedInformation"' in json.dumps(ours)
    assert with_related  # some golden drafts' diagnostics have related locations


def test_a_version_whose_diagnostics_keep_their_lines_and_columns_makes_no_json_again() -> None:
    from unittest.mock import patch

    from scaling_core import analyze_document
    from scaling_core.text import LineIndex
    from server.lsp import convert
    from server.lsp.app import create_server

    text = "".join(f"Step {n}: it takes {n + 1} s<!-- = {n} s -->.\n" for n in range(50))  # 50 failing claims
    made = DiagnosticsJson(create_server().protocol._converter.unstructure)

    def publish(draft: str, version: int) -> str:
        analysis = analyze_document(draft, "/tmp/steps.md")
        converter = convert.PositionConverter(LineIndex(draft), "utf-16")
        return made.notification("file:///tmp/steps.md", version, converter, analysis.diagnostics)

    first = publish(text, 1)
    with patch.object(convert, "diagnostic", side_effect=AssertionError("made again")):
        typed = publish(text + "\nTyping at the end.\n", 2)  # every diagnostic where it was
    assert typed == first.replace('"version": 1', '"version": 2')
    moved = "A new first line.\n" + text  # every diagnostic one line down: all made again
    with patch.object(convert, "diagnostic", side_effect=AssertionError("made again")):
        with pytest.raises(AssertionError, match="made again"):
            publish(moved, 3)
