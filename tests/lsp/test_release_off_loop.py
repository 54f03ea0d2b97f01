"""A long draft's dropped results (a replaced analysis, a closed draft's) are freed by the release thread,
not on the event loop."""

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


class Freed:
    """Which thread freed each watched object (finalizers hold no reference to what they watch)."""

    def __init__(self, expected: int) -> None:
        self.threads: dict[str, str] = {}
        self.expected = expected
        self.all_freed = threading.Event()

    def watch(self, item: object, label: str) -> None:
        weakref.finalize(item, self._note, label)

    def _note(self, label: str) -> None:
        self.threads[label] = threading.current_thread().name
        if len(self.threads) == self.expected:
            self.all_freed.set()


async def _analysed(state: State, published: asyncio.Queue[int], uri: str, version: int, text: str) -> None:
    state.documents[uri] = Document(uri, version, text)
    state.schedule(uri)
    assert await asyncio.wait_for(published.get(), 60) == version


def _publisher(published: asyncio.Queue[int], freed: Freed) -> State:
    def publish(document: Document, analysis: DocumentAnalysis) -> None:
        if document.version == 1:
            freed.watch(analysis, "analysis")
        published.put_nowait(document.version)

    return State(publish)


@pytest.fixture(autouse=True)
def _drafts_count_as_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "RELEASE_IN_BACKGROUND_FROM", 10)


def test_the_replaced_analysis_of_a_long_draft_is_freed_by_the_release_thread(tmp_path: Path) -> None:
    freed = Freed(1)

    async def scenario() -> int:
        published: asyncio.Queue[int] = asyncio.Queue()
        state = _publisher(published, freed)
        uri = (tmp_path / "draft.md").as_uri()
        await _analysed(state, published, uri, 1, DRAFT)
        await _analysed(state, published, uri, 2, DRAFT.replace("128", "256"))
        return state.released_in_background

    assert asyncio.run(scenario()) == 1
    assert freed.all_freed.wait(60), "the first version's analysis was never freed"
    assert freed.threads == {"analysis": "margin-release"}  # MainThread when the loop kept a reference


def test_closing_a_long_draft_frees_its_analysis_and_region_cache_by_the_release_thread(tmp_path: Path) -> None:
    freed = Freed(2)

    async def scenario() -> int:
        published: asyncio.Queue[int] = asyncio.Queue()
        state = _publisher(published, freed)
        uri = (tmp_path / "draft.md").as_uri()
        await _analysed(state, published, uri, 1, DRAFT)
        freed.watch(state.caches[uri], "region cache")
        state.close(uri)
        assert uri not in state.analyses and uri not in state.caches
        return state.released_in_background

    assert asyncio.run(scenario()) == 1
    assert freed.all_freed.wait(60), f"not freed: {freed.threads}"
    assert freed.threads == {"analysis": "margin-release", "region cache": "margin-release"}
