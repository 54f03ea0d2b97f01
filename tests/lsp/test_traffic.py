"""The preparation in pauses gives way to the editor's messages on their way (server/lsp/traffic.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from server.lsp import traffic as traffic_module
from server.lsp.traffic import GIVE_WAY_MOST_S, GIVE_WAY_STEP_S, EditorTraffic
from server.lsp.transport import threaded_reader
from tests.lsp.conftest import TIMEOUT_S


def test_a_question_sleeps_while_a_chunk_is_on_its_way_then_asks_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    traffic, asked, slept = EditorTraffic(), [], []

    def sleep(seconds: float) -> None:  # the event loop dispatches the chunk while the preparation sleeps
        slept.append(seconds)
        if len(slept) == 3:
            traffic.chunk_dispatched()

    monkeypatch.setattr(traffic_module, "sleep", sleep)
    ask = traffic.giving_way(lambda: asked.append(1) is None)
    assert ask() is True and slept == [] and len(asked) == 1  # nothing on its way: go_on, at once
    traffic.chunk_read()
    assert traffic.on_its_way()
    asked.clear()
    assert ask() is True
    assert slept == [GIVE_WAY_STEP_S] * 3 and not traffic.on_its_way()
    assert len(asked) == 4  # before each sleep (the draft may have changed meanwhile), and once it is dispatched


def test_a_question_stops_at_once_when_the_draft_changed_and_never_waits_for_ever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    traffic, slept = EditorTraffic(), []
    monkeypatch.setattr(traffic_module, "sleep", slept.append)
    traffic.chunk_read()  # never dispatched
    assert traffic.giving_way(lambda: False)() is False and slept == []  # an edit came: stop, no sleep
    assert traffic.giving_way(lambda: True)() is True
    assert len(slept) == round(GIVE_WAY_MOST_S / GIVE_WAY_STEP_S)  # then it goes on regardless


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
    traffic, slept, answers = EditorTraffic(), [], asyncio.Queue[bool]()
    monkeypatch.setattr(traffic_module, "sleep", lambda seconds: slept.append(seconds) or traffic.chunk_dispatched())

    def parts(self: query_cache.QueryCache, uri: str, analysis: Any, still_current: Any, lenses: bool) -> bool:
        traffic.chunk_read()  # a keystroke read while the preparation runs
        answers.put_nowait(still_current())
        return True

    monkeypatch.setattr(query_cache.QueryCache, "_prepare_parts", parts)
    published: asyncio.Queue[str] = asyncio.Queue()
    state = State(lambda document, analysis: published.put_nowait(document.uri), give_way=traffic.giving_way)
    uri = (tmp_path / "draft.md").as_uri()
    state.documents[uri] = Document(uri, 1, "```calc\nD = 8192\n```\n")
    state.schedule(uri)
    assert await asyncio.wait_for(published.get(), TIMEOUT_S) == uri
    assert await asyncio.wait_for(answers.get(), TIMEOUT_S) is True  # still current, once the chunk went by
    assert slept == [GIVE_WAY_STEP_S]
