"""The state's scheduling policies on a real event loop (server/lsp/scheduling.py)."""

from __future__ import annotations

import asyncio

import pytest

from server.lsp import scheduling
from server.lsp.scheduling import WhenQuiet


async def test_a_quiet_job_is_replaced_by_the_next_and_never_runs_once_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scheduling, "QUIET_AFTER_S", 0.0)  # quiet at once: the order of the jobs is what is tested
    quiet, ran, both = WhenQuiet(), [], asyncio.Event()

    def job(name: str) -> None:
        ran.append(name)
        if len(ran) == 2:
            both.set()

    quiet.after_quiet("a.md", lambda: job("first version of a"))
    quiet.after_quiet("a.md", lambda: job("second version of a"))  # an edit, then its analysis: replaces the first
    quiet.after_quiet("b.md", lambda: job("b"))
    quiet.cancel("b.md")  # edited again before it was quiet
    quiet.after_quiet("c.md", lambda: job("c"))
    await asyncio.wait_for(both.wait(), 5)
    assert sorted(ran) == ["c", "second version of a"]


async def test_a_job_waits_until_the_document_has_been_quiet() -> None:
    loop = asyncio.get_running_loop()
    quiet, ran = WhenQuiet(), asyncio.Event()
    began = loop.time()
    quiet.after_quiet("a.md", ran.set)
    await asyncio.wait_for(ran.wait(), 5)
    assert loop.time() - began >= scheduling.QUIET_AFTER_S
