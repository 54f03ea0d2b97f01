"""Dropped results are freed off the event loop: a long draft's (a replaced analysis, a closed draft's) by the
release thread, a shorter draft's replaced analysis by the analysis thread once no analysis runs."""

from __future__ import annotations

import asyncio
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from scaling_core import DocumentAnalysis
from server.lsp import scheduling
from server.lsp import state as state_module
from server.lsp.documents import Document
from server.lsp.scheduling import LaterRelease
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


def test_the_replaced_analysis_of_a_short_draft_is_freed_by_the_analysis_thread_after_the_publish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RELEASE_IN_BACKGROUND_FROM", 1_000_000)
    freed = Freed(1)

    async def scenario() -> tuple[int, bool]:
        published: asyncio.Queue[int] = asyncio.Queue()
        state = _publisher(published, freed)
        uri = (tmp_path / "draft.md").as_uri()
        await _analysed(state, published, uri, 1, DRAFT)
        await _analysed(state, published, uri, 2, DRAFT.replace("128", "256"))
        kept_after_publish = not freed.all_freed.is_set()  # the loop goes on to the editor's requests first
        await asyncio.get_running_loop().run_in_executor(None, freed.all_freed.wait, 60)
        return state.released_in_background, kept_after_publish

    assert asyncio.run(scenario()) == (0, True)
    assert freed.all_freed.is_set(), "the first version's analysis was never freed"
    assert freed.threads["analysis"].startswith("margin-analysis")  # MainThread when freed on the loop


class Watched:
    """Something to free, whose finalizer notes the thread that freed it."""


def test_a_later_release_waits_while_an_analysis_runs_and_keeps_few_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "RELEASE_AFTER_S", 0.01)
    busy = threading.Event()
    busy.set()
    watched = [Watched() for _ in range(scheduling.MOST_WAITING + 1)]
    freed = Freed(len(watched))
    for number, item in enumerate(watched):
        freed.watch(item, str(number))
    del item  # the list holds the only references

    async def scenario() -> dict[str, str]:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="margin-analysis") as executor:
            later = LaterRelease(executor, busy.is_set)
            for _ in range(len(watched)):
                later.release([watched.pop(0)])
            assert freed.threads == {"0": "MainThread"}  # one too many waiting: the oldest freed at once
            await asyncio.sleep(0.1)  # several of the release's turns: an analysis runs, nothing is freed
            assert list(freed.threads) == ["0"]
            busy.clear()
            await asyncio.get_running_loop().run_in_executor(None, freed.all_freed.wait, 60)
        return freed.threads

    threads = asyncio.run(scenario())
    assert len(threads) == len(freed.threads) == scheduling.MOST_WAITING + 1
    assert all(threads[str(n)].startswith("margin-analysis") for n in range(1, scheduling.MOST_WAITING + 1))
