"""A long draft's replaced analysis is freed by the release thread, not on the event loop."""

from __future__ import annotations

import asyncio
import threading
import weakref
from pathlib import Path

import pytest

from scaling_core import DocumentAnalysis
from server.lsp import state as state_module
from server.lsp.documents import Document
from server.lsp.state import State

DRAFT = "```calc\nB = 128\nF = 4 * B\n```\n\nThe batch is `B = 128`.\n"


def test_the_replaced_analysis_of_a_long_draft_is_freed_by_the_release_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RELEASE_IN_BACKGROUND_FROM", 10)  # this draft counts as long
    freed = threading.Event()
    freed_in: list[str] = []

    def note_freed() -> None:
        freed_in.append(threading.current_thread().name)
        freed.set()

    async def scenario() -> int:
        published: asyncio.Queue[int] = asyncio.Queue()

        def publish(document: Document, analysis: DocumentAnalysis) -> None:
            if document.version == 1:
                weakref.finalize(analysis, note_freed)  # holds no reference to it
            published.put_nowait(document.version)

        state = State(publish)
        uri = (tmp_path / "draft.md").as_uri()
        state.documents[uri] = Document(uri, 1, DRAFT)
        state.schedule(uri)
        assert await asyncio.wait_for(published.get(), 60) == 1
        state.documents[uri] = Document(uri, 2, DRAFT.replace("128", "256"))
        state.schedule(uri)
        assert await asyncio.wait_for(published.get(), 60) == 2
        return state.released_in_background

    assert asyncio.run(scenario()) == 1
    assert freed.wait(60), "the first version's analysis was never freed"
    assert freed_in == ["margin-release"]


def test_closing_a_long_draft_frees_its_analysis_and_region_cache_by_the_release_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RELEASE_IN_BACKGROUND_FROM", 10)  # this draft counts as long
    freed_in: dict[str, str] = {}
    both_freed = threading.Event()

    def note_freed(what: str) -> None:
        freed_in[what] = threading.current_thread().name
        if len(freed_in) == 2:
            both_freed.set()

    async def scenario() -> int:
        published: asyncio.Queue[int] = asyncio.Queue()

        def publish(document: Document, analysis: DocumentAnalysis) -> None:
            weakref.finalize(analysis, note_freed, "analysis")
            published.put_nowait(document.version)

        state = State(publish)
        uri = (tmp_path / "draft.md").as_uri()
        state.documents[uri] = Document(uri, 1, DRAFT)
        state.schedule(uri)
        assert await asyncio.wait_for(published.get(), 60) == 1
        weakref.finalize(state.caches[uri], note_freed, "region cache")
        state.close(uri)
        assert uri not in state.analyses and uri not in state.caches
        return state.released_in_background

    assert asyncio.run(scenario()) == 1
    assert both_freed.wait(60), f"not freed: {freed_in}"
    assert freed_in == {"analysis": "margin-release", "region cache": "margin-release"}
