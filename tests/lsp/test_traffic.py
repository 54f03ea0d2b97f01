"""The preparation in pauses gives way to the editor's messages on their way (server/lsp/traffic.py)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from server.lsp import traffic as traffic_module
from server.lsp.traffic import EditorTraffic
from server.lsp.transport import threaded_reader
from tests.lsp.conftest import TIMEOUT_S


def test_a_question_waits_while_a_chunk_is_on_its_way_then_asks_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(traffic_module, "GIVE_WAY_MOST_S", TIMEOUT_S)
    traffic, asked, answers = EditorTraffic(), [], []
    ask = traffic.giving_way(lambda: asked.append(1) is None)
    assert ask() is True and len(asked) == 1  # nothing on its way: go_on, at once
    traffic.chunk_read()
    waiting = threading.Thread(target=lambda: answers.append(ask()))
    waiting.start()
    waiting.join(0.1)
    assert waiting.is_alive() and answers == []  # it waits for the event loop
    traffic.chunk_dispatched()  # the event loop dispatched the chunk: the question goes on
    waiting.join(TIMEOUT_S)
    assert answers == [True] and not traffic.on_its_way()


def test_a_question_stops_at_once_when_the_draft_changed_and_never_waits_for_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    traffic = EditorTraffic()
    traffic.chunk_read()  # never dispatched
    monkeypatch.setattr(traffic_module, "GIVE_WAY_MOST_S", TIMEOUT_S)
    began = time.monotonic()
    assert traffic.giving_way(lambda: False)() is False  # an edit came: stop, without waiting
    assert time.monotonic() - began < TIMEOUT_S / 2
    monkeypatch.setattr(traffic_module, "GIVE_WAY_MOST_S", 0.05)
    began = time.monotonic()
    assert traffic.giving_way(lambda: True)() is True  # then it goes on regardless
    assert time.monotonic() - began >= 0.05


def test_a_question_asked_on_the_thread_that_dispatches_never_waits_for_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(traffic_module, "GIVE_WAY_MOST_S", TIMEOUT_S)
    traffic = EditorTraffic()
    traffic.chunk_read()
    traffic.chunk_dispatched()  # this thread dispatches, as the event loop does
    traffic.chunk_read()  # the next chunk, which only this thread can dispatch
    began = time.monotonic()
    assert traffic.giving_way(lambda: True)() is True  # the preparation's first question, on the event loop
    assert time.monotonic() - began < TIMEOUT_S / 2


async def test_the_reader_counts_a_chunk_dispatched_when_it_is_asked_for_the_next() -> None:
    traffic = EditorTraffic()
    into_reader, from_editor = os.pipe()
    with os.fdopen(into_reader, "rb", buffering=0) as stream:
        read = threaded_reader(stream, traffic)
        os.write(from_editor, b"Content-Length: 2\r\n\r\n{}")
        assert await asyncio.wait_for(read(), TIMEOUT_S) == b"Content-Length: 2\r\n\r\n{}"
        assert traffic.on_its_way()  # read, and its message not dispatched yet
        os.close(from_editor)
        assert await asyncio.wait_for(read(), TIMEOUT_S) == b""  # the end of the stream
        assert traffic._dispatched == 1 and traffic._read == 2


async def test_the_state_hands_the_preparation_its_question_giving_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from server.lsp import query_cache, scheduling
    from server.lsp.documents import Document
    from server.lsp.state import State

    monkeypatch.setattr(scheduling, "QUIET_AFTER_S", 0.0)
    monkeypatch.setattr(traffic_module, "GIVE_WAY_MOST_S", TIMEOUT_S)
    traffic, events, answered = EditorTraffic(), [], asyncio.Event()
    loop = asyncio.get_running_loop()

    def dispatched() -> None:
        events.append("dispatched")
        traffic.chunk_dispatched()

    def parts(self: query_cache.QueryCache, uri: str, analysis: Any, still_current: Any, lenses: bool) -> bool:
        traffic.chunk_read()  # a message read while the preparation runs, dispatched 50 ms later
        loop.call_soon_threadsafe(loop.call_later, 0.05, dispatched)
        events.append(f"still current: {still_current()}")
        loop.call_soon_threadsafe(answered.set)
        return True

    monkeypatch.setattr(query_cache.QueryCache, "_prepare_parts", parts)
    published: asyncio.Queue[str] = asyncio.Queue()
    state = State(lambda document, analysis: published.put_nowait(document.uri), give_way=traffic.giving_way)
    uri = (tmp_path / "draft.md").as_uri()
    state.documents[uri] = Document(uri, 1, "```calc\nD = 8192\n```\n")
    state.schedule(uri)
    assert await asyncio.wait_for(published.get(), TIMEOUT_S) == uri
    await asyncio.wait_for(answered.wait(), TIMEOUT_S)
    assert events == ["dispatched", "still current: True"]  # its question waited for the message to go by
