"""Coverage in the editor, through the real server: a lens per heading, who tests a definition, and
(when a setting turns it on) an information diagnostic on each definition no problem tests.

The ``@SHARED_SERVER`` tests run with the default settings; a test that changes them has its own server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.queries.coverage import coverage_unless_stopped as COVERAGE_UNLESS_STOPPED
from scaling_core.queries.coverage import document_coverage as DOCUMENT_COVERAGE
from tests.lsp.conftest import (
    SHARED_SERVER,
    TIMEOUT_S,
    RecordingClient,
    diagnostics,
    next_publish,
    open_document,
    uses_pull,
)

DRAFT = """# Matmul

```calc
D = 8192
F = 4 * D
unused = 3
```

## Problems

**Question 1:** What is F?

`F * 1 = 32768`
"""
#: "# Matmul" spans its subsection: concepts Matmul, D, F, unused and Problems, all but unused tested.
HEADING_LENSES = [
    (0, "1 problem · 1 check · 80% of concepts tested"),
    (8, "1 problem · 1 check · 100% of concepts tested"),
]
PROBLEM_LENS = (10, "✓ pass: 1/1 checks pass")


async def lenses(client: RecordingClient, uri: str) -> list[tuple[int, str]]:
    found = await asyncio.wait_for(
        client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri))), TIMEOUT_S
    )
    return sorted((lens.range.start.line, lens.command.title if lens.command else "") for lens in found or [])


async def hover(client: RecordingClient, uri: str, line: int, character: int) -> str:
    found = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, character))
        ),
        TIMEOUT_S,
    )
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    return found.contents.value


@SHARED_SERVER
async def test_each_heading_has_a_lens_with_its_problems_checks_and_concepts_tested(client: RecordingClient) -> None:
    uri = await open_document(client, "coverage-lenses.md", DRAFT)
    assert await lenses(client, uri) == sorted([*HEADING_LENSES, PROBLEM_LENS])


@SHARED_SERVER
async def test_hover_on_a_definition_lists_the_problems_that_test_it(client: RecordingClient) -> None:
    uri = await open_document(client, "coverage-hover.md", DRAFT)
    tested = await hover(client, uri, 4, 0)  # F = 4 * D
    assert "Tested by **Question 1** (line 11, ✓ 1/1 checks pass)" in tested
    assert "Tested by **Question 1**" in await hover(client, uri, 4, 8)  # D, used in F's definition
    assert "No problem tests `unused` yet." in await hover(client, uri, 5, 0)


@SHARED_SERVER
async def test_untested_definitions_are_not_flagged_by_default(client: RecordingClient) -> None:
    uri = await open_document(client, "coverage-quiet.md", DRAFT)
    assert await diagnostics(client, uri, 1) == []


async def test_a_setting_flags_untested_definitions_and_another_hides_the_heading_lenses(
    fresh_client: RecordingClient,
) -> None:
    client = fresh_client  # settings are per server
    uri = await open_document(client, "coverage-settings.md", DRAFT)
    assert await diagnostics(client, uri, 1) == []
    before = await pulled_result_id(client, uri)
    client.set_configuration({"coverageDiagnostics": True, "coverageLenses": False}, section="margin")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    if uses_pull(client):
        # The text is the same but the settings are not: a client sending its last result id gets the new items.
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri), previous_result_id=before)
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        found = list(report.items)
    else:
        found = await next_publish(client, uri, lambda items: bool(items))
    assert [(d.message, d.severity, d.code, d.range.start.line) for d in found] == [
        ("no problem tests `unused`", types.DiagnosticSeverity.Information, None, 5)
    ]
    assert (found[0].range.start.character, found[0].range.end.character) == (0, len("unused"))
    assert await lenses(client, uri) == [PROBLEM_LENS]
    # A client that can be asked to fetch code lenses again is asked (VS Code), others are not (Neovim).
    workspace = client.capabilities.workspace if client.capabilities else None
    asks = int(bool(workspace and workspace.code_lens and workspace.code_lens.refresh_support))
    assert client.code_lens_refreshes == asks


async def pulled_result_id(client: RecordingClient, uri: str) -> str | None:
    """The result id of a pulled diagnostics report (None for a client that does not pull)."""
    if not uses_pull(client):
        return None
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )
    return report.result_id


def _analysis() -> DocumentAnalysis:
    return analyze_document(DRAFT, "/tmp/coverage-cache.md")


def test_coverage_is_computed_once_per_analysis() -> None:
    from server.lsp.state import State

    state = State(lambda document, analysis: None)
    first, second = _analysis(), _analysis()
    once = state.queries.coverage("file:///tmp/coverage-cache.md", first)
    assert state.queries.coverage("file:///tmp/coverage-cache.md", first) is once
    again = state.queries.coverage("file:///tmp/coverage-cache.md", second)
    assert again is not once and again == once  # a new analysis: computed again, the same answer
    state.close("file:///tmp/coverage-cache.md")
    assert state.queries.coverage("file:///tmp/coverage-cache.md", second) is not again


def test_coverage_settings_in_the_project_and_the_editor() -> None:
    from scaling_core import config_from_mapping
    from server.lsp.settings import settings_to_config

    assert (Config().coverage_lenses, Config().coverage_diagnostics) == (True, False)
    project, problems = config_from_mapping({"coverage_diagnostics": True, "coverage-lenses": False})
    assert problems == [] and (project.coverage_lenses, project.coverage_diagnostics) == (False, True)
    _config, problems = config_from_mapping({"coverage_diagnostics": "yes"})
    assert problems == ["coverage_diagnostics: must be true or false"]
    # The editor's settings layer over the project's; what the editor does not set, the project keeps.
    config, problems = settings_to_config(project, {"margin": {"coverageLenses": True}})
    assert problems == [] and (config.coverage_lenses, config.coverage_diagnostics) == (True, True)


async def _prepared(client: RecordingClient, at_least: int) -> int:
    """serverStats' count of analyses prepared for hovers, asked again until it reaches ``at_least``."""

    async def count() -> int:
        while (stats := await client.protocol.send_request_async("margin/serverStats", {})).queries_prepared < at_least:
            pass  # one request after another, until the server's quiet timer has run its job
        return int(stats.queries_prepared)

    return await asyncio.wait_for(count(), TIMEOUT_S)


async def test_a_pause_after_an_edit_prepares_the_hover_of_that_version(fresh_client: RecordingClient) -> None:
    client = fresh_client  # a server of its own: its count starts at 0
    uri = await open_document(client, "prepared.md", DRAFT)
    await diagnostics(client, uri, 1)
    assert await _prepared(client, 1) == 1
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 8), types.Position(0, 8)), text="!"
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), [edit])
    )
    await diagnostics(client, uri, 2)
    assert await _prepared(client, 2) == 2
    tested = await hover(client, uri, 4, 0)  # F: what the prepared analysis says, as an unprepared one would
    assert "Tested by **Question 1** (line 11, ✓ 1/1 checks pass)" in tested


def _then(
    first: Callable[[asyncio.Future[bool]], None], then: Callable[[], None]
) -> Callable[[asyncio.Future[bool]], None]:
    """``first(work)``, then ``then()``: to know when a prepared job's result has been taken."""

    def both(work: asyncio.Future[bool]) -> None:
        first(work)
        then()

    return both


async def test_a_pause_prepares_the_lenses_coverage_only_when_lenses_are_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from server.lsp import query_cache, scheduling

    monkeypatch.setattr(scheduling, "QUIET_AFTER_S", 0.0)
    computed: list[DocumentAnalysis] = []
    monkeypatch.setattr(query_cache, "document_coverage", lambda a: computed.append(a) or DOCUMENT_COVERAGE(a))
    monkeypatch.setattr(  # what a pause prepares: the same coverage, stopped if the draft changes
        query_cache, "coverage_unless_stopped", lambda a, go_on: computed.append(a) or COVERAGE_UNLESS_STOPPED(a, go_on)
    )
    for lenses in (False, True):
        cache, done = query_cache.QueryCache(ThreadPoolExecutor(max_workers=1)), asyncio.Event()
        monkeypatch.setattr(cache, "_prepared", _then(cache._prepared, done.set))
        analysis = _analysis()
        cache.replaced("file:///tmp/prepared.md", analysis, lambda: True, lenses)
        await asyncio.wait_for(done.wait(), TIMEOUT_S)
        assert cache.prepared == 1 and computed == ([analysis] if lenses else [])
        cache.coverage("file:///tmp/prepared.md", analysis)  # the lenses' request: prepared, or computed now
        assert computed == [analysis]
        computed.clear()


async def test_an_edit_while_a_pause_prepares_the_coverage_stops_it_at_the_next_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from scaling_core.queries import coverage
    from server.lsp import query_cache, scheduling

    monkeypatch.setattr(scheduling, "QUIET_AFTER_S", 0.0)
    monkeypatch.setattr(coverage, "ITEMS_BETWEEN_QUESTIONS", 2)
    asked_in_coverage, results = [], []
    in_coverage = False

    def still_current() -> bool:  # the author types again while the coverage's second slice is read
        if in_coverage:
            asked_in_coverage.append(1)
        return len(asked_in_coverage) < 3

    def slices(analysis: DocumentAnalysis, go_on: Callable[[], bool]) -> object:
        nonlocal in_coverage
        in_coverage = True
        results.append(COVERAGE_UNLESS_STOPPED(analysis, go_on))
        return results[-1]

    monkeypatch.setattr(query_cache, "coverage_unless_stopped", slices)
    cache, done = query_cache.QueryCache(ThreadPoolExecutor(max_workers=1)), asyncio.Event()
    monkeypatch.setattr(cache, "_prepared", _then(cache._prepared, done.set))
    analysis, uri = _analysis(), "file:///tmp/prepared.md"
    cache.replaced(uri, analysis, still_current, True)
    await asyncio.wait_for(done.wait(), TIMEOUT_S)
    assert results == [None] and len(asked_in_coverage) == 3  # stopped where told, not asked again
    assert cache.prepared == 0 and uri not in cache._coverage  # nothing half-made is kept
    assert cache.coverage(uri, analysis) == DOCUMENT_COVERAGE(_analysis())  # the lenses' request: the whole of it


async def test_drafts_of_a_million_characters_or_more_are_not_prepared_in_pauses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from server.lsp import query_cache, scheduling
    from server.lsp import state as state_module
    from server.lsp.documents import Document

    monkeypatch.setattr(scheduling, "QUIET_AFTER_S", 0.0)
    # Measured on dense drafts of 1.2 M characters prepared in pauses: the lenses after a pause 70-130 -> 3-6 ms,
    # but inlay hints' p95 3 -> 11 ms and the longest event-loop turn 5 -> 24 ms (budgets: 10 and 20).
    monkeypatch.setattr(state_module, "RELEASE_IN_BACKGROUND_FROM", len(DRAFT) + 1)
    prepared: asyncio.Queue[str] = asyncio.Queue()
    parts = query_cache.QueryCache._prepare_parts

    def noted(self: query_cache.QueryCache, uri: str, *rest: Any) -> bool:
        done = parts(self, uri, *rest)
        prepared.put_nowait(uri)
        return done

    monkeypatch.setattr(query_cache.QueryCache, "_prepare_parts", noted)
    published: asyncio.Queue[str] = asyncio.Queue()
    state = state_module.State(lambda document, analysis: published.put_nowait(document.uri))
    opened = []
    for name, text in (("first.md", DRAFT), ("too-long.md", DRAFT + "\n"), ("last.md", DRAFT)):
        uri = (tmp_path / name).as_uri()
        state.documents[uri] = Document(uri, 1, text)
        state.schedule(uri)
        assert await asyncio.wait_for(published.get(), TIMEOUT_S) == uri
        opened.append(uri)
    found = [await asyncio.wait_for(prepared.get(), TIMEOUT_S) for _ in range(2)]
    # One analysis thread runs the jobs in turn: the too-long draft's would have come before the last one's.
    assert found == [opened[0], opened[2]] and state.queries.prepared == 2
