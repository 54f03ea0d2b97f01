"""Diagnostics are converted to the protocol's form in the analysis thread, never on the event loop."""

from __future__ import annotations

import asyncio
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
