"""A draft the time budget stops part-way: the server goes on from where it stopped, at the same version."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.expr import values
from server.lsp.documents import Document
from server.lsp.state import State

SECTION = "## Step {i}\n\n```calc\nB_{i} = {b}\nt_{i} = 2 * B_{i} * 8192 FLOP / (197 TFLOP/s) -> us\n```\n\nIt is {b}<!-- = B_{i} -->.\n\n"
DRAFT = "".join(SECTION.format(i=i, b=64 + i) for i in range(600))


def stopped(analysis: DocumentAnalysis) -> bool:
    return any(d.code == "E003" and "of time is spent" in d.message for d in analysis.diagnostics)


async def settle(state: State, seconds: float = 60.0) -> None:
    for _ in range(int(seconds / 0.01)):
        await asyncio.sleep(0.01)
        if all(task.done() for task in state._pending.values()):
            return


def session(tmp_path: Path, limit: float) -> tuple[State, list[DocumentAnalysis], str]:
    published: list[DocumentAnalysis] = []
    state = State(lambda document, analysis: published.append(analysis))
    state.config = replace(Config(), analysis_time_limit=limit)
    uri = (tmp_path / "long.md").as_uri()
    state.documents[uri] = Document(uri, 1, DRAFT)
    return state, published, uri


def test_an_analysis_stopped_for_time_goes_on_until_the_draft_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The budget's clock ticks once per look at it (each statement evaluated looks once): a budget of 300
    # ticks stops each analysis after ~300 statements whatever the machine's speed; replayed ones are free.
    full = analyze_document(DRAFT, str(tmp_path / "long.md"))
    ticks = itertools.count()
    monkeypatch.setattr(values, "clock", lambda: float(next(ticks)))

    async def scenario() -> None:
        state, published, uri = session(tmp_path, 300)
        state.schedule(uri)
        await settle(state)
        assert stopped(published[0])  # the first analysis ran out of time part-way
        final = published[-1]
        assert not stopped(final) and len(published) >= 2
        assert [(c.span, c.status) for c in final.checks] == [(c.span, c.status) for c in full.checks]
        assert final.diagnostics == full.diagnostics
        assert state.analyses[uri][1] is final

    asyncio.run(scenario())


def test_an_analysis_that_stops_at_the_same_place_again_is_not_repeated(tmp_path: Path) -> None:
    async def scenario() -> None:
        state, published, uri = session(tmp_path, 1e-9)  # every analysis stops at its first statement
        state.schedule(uri)
        await settle(state)
        await asyncio.sleep(0.2)
        assert len(published) == 2 and all(stopped(a) for a in published)  # once more, then no further

    asyncio.run(scenario())
