"""Measurements in the editor, through the real server over stdio: the cache read as ``margin check`` reads it,
"Run measurement" / "Re-measure" code lenses, hover, and a real background measurement with progress and cancel.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import client_capabilities

from scaling_core import Config, analyze_document
from scaling_core.document.analysis import ImportContext
from scaling_core.measured import Measurement, MeasureRequest
from server.measurements import CACHE_FILE, MeasurementCache
from tests.lsp.conftest import PROFILES, SERVER, TIMEOUT_S, RecordingClient, diagnostics, next_publish, uses_pull

needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")
#: A tiny method: a 16x16 matmul timed a few times on a shared 2-core machine.
FAST = {"min_samples": 3, "min_seconds": 0.0, "warmup": 1}

FOUND = "t1 = measure_matmul(bf16[B, 64], bf16[64, 64], h100)"
NOISY = "t2 = measure_copy(1 MiB, h100)"
STALE = "t3 = measure_matmul(bf16[B, 128], bf16[128, 128], h100)"
MISSING = "t4 = measure_collective(all_gather, 64 MiB, 8, h100)"
DRAFT = "```calc\nB = 32\n" + "\n".join([FOUND, NOISY, STALE, MISSING]) + "\nt1.median ≈ 1 ms\n```\n"


class Recorder:
    """The requests an analysis makes (as margin measure's collector records them), answered from a cache."""

    def __init__(self, cache: MeasurementCache) -> None:
        self.cache, self.requests = cache, []  # type: tuple[MeasurementCache, list[MeasureRequest]]

    def lookup(self, request: MeasureRequest) -> Measurement:
        self.requests.append(request)
        return self.cache.lookup(request)


def record(root: Path, text: str, path: Path, cv: float = 0.02, only: str = "") -> None:
    """Write cache entries for the requests ``text`` makes (those whose call contains ``only``), as margin measure does."""
    cache = MeasurementCache(root)
    recorder = Recorder(cache)
    analyze_document(text, str(path), Config(), context=ImportContext(measurements=recorder))
    for request in recorder.requests:
        if only not in request.call:
            continue
        result = {"median_s": 1e-3, "min_s": 9e-4, "p90_s": 1.1e-3, "cv": cv, "n": 20, "compile_s": 0.25,
                  "samples": [1e-3] * 20}  # fmt: skip
        provenance = {"device_kind": "NVIDIA H100 80GB HBM3", "host": "gpu-box", "jax": "0.10.2",
                      "date": "2026-05-01T10:00:00Z", "method": {"min_samples": 20, "min_seconds": 0.5, "warmup": 3}}  # fmt: skip
        cache.record(request, "h100", result, provenance)
    cache.save()


def committed_cache(root: Path) -> Path:
    """A project whose committed cache has FOUND, NOISY (CV 0.3) and STALE (measured at another B), not MISSING."""
    draft = root / "draft.md"
    record(root, DRAFT, draft, only="64]")
    record(root, DRAFT, draft, cv=0.3, only="measure_copy")
    record(root, DRAFT.replace("B = 32", "B = 16"), draft, only="128]")  # the same call, at another B
    return draft


async def begin(client: RecordingClient, profile: str, root: Path) -> None:
    params = types.InitializeParams(capabilities=client_capabilities(profile), root_uri=root.as_uri(),
                                    workspace_folders=[types.WorkspaceFolder(root.as_uri(), "project")])  # fmt: skip
    result = await client.initialize_session(params)
    client.server_encoding = str(result.capabilities.position_encoding or "utf-16")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'drafts'\n", "utf-8")
    return tmp_path


@pytest_lsp.fixture(params=PROFILES, config=SERVER)
async def client(
    lsp_client: RecordingClient, request: pytest.FixtureRequest, project: Path
) -> AsyncIterator[RecordingClient]:
    await begin(lsp_client, request.param, project)
    yield lsp_client
    await lsp_client.shutdown_session()


def open_draft(client: RecordingClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", version, text))
    )
    return uri


def codes(items: list[types.Diagnostic]) -> list[tuple[str, int]]:
    return [(str(d.code), d.range.start.line) for d in items]


async def fresh_diagnostics(client: RecordingClient, uri: str, version: int, accept: Any) -> list[types.Diagnostic]:
    """Diagnostics of ``uri`` that ``accept`` approves after a re-check: pushed again, or pulled.

    A pull is answered from the re-check: the server drops the old analysis before it answers
    the message that caused the re-check (the progress end, didChangeWatchedFiles).
    """
    if not uses_pull(client):
        return await next_publish(client, uri, accept)
    items = await diagnostics(client, uri, version)
    assert accept(items), [(d.code, d.message) for d in items]
    return items


async def progress_end(client: RecordingClient, token: str) -> types.WorkDoneProgressEnd:
    """Wait for the end of the progress ``token`` (no sleeps: woken by each ``$/progress``)."""
    while True:
        reports = client.progress_reports.get(token, [])
        if reports and isinstance(reports[-1], types.WorkDoneProgressEnd):
            return reports[-1]
        await asyncio.wait_for(client.wait_for_notification(types.PROGRESS), TIMEOUT_S)


async def test_the_editor_reads_the_committed_cache_as_margin_check_does(
    client: RecordingClient, project: Path
) -> None:
    draft = committed_cache(project)
    uri = open_draft(client, draft, DRAFT)
    items = await diagnostics(client, uri, 1)
    # The CI path: margin check hands the engine the project's cache.
    expected = analyze_document(DRAFT, str(draft), Config(),
                                context=ImportContext(measurements=MeasurementCache(project))).diagnostics  # fmt: skip
    assert [(d.code, d.message) for d in expected] == [(str(d.code), d.message) for d in items]
    assert codes(items) == [("T004", 3), ("T005", 4), ("T003", 5)]  # noisy, stale, missing; FOUND's check passes
    assert "no measurement for h100" in items[2].message


async def test_each_measure_call_has_a_run_or_re_measure_lens(client: RecordingClient, project: Path) -> None:
    uri = open_draft(client, committed_cache(project), DRAFT)
    await diagnostics(client, uri, 1)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    measured = sorted((lens.range.start.line, lens.command.title, lens.command.command) for lens in lenses
                      if lens.command is not None and lens.command.command)  # fmt: skip
    assert measured == [(2, "↻ Re-measure", "margin.measure"), (3, "↻ Re-measure", "margin.measure"),
                        (4, "↻ Re-measure", "margin.measure"), (5, "▶ Run measurement", "margin.measure")]  # fmt: skip
    (argument,) = next(lens for lens in lenses if lens.range.start.line == 5).command.arguments  # type: ignore[union-attr]
    assert argument["call"] == MISSING.removeprefix("t4 = ") and argument["uri"] == uri


async def test_hover_on_a_measured_call_shows_its_samples_and_provenance(
    client: RecordingClient, project: Path
) -> None:
    uri = open_draft(client, committed_cache(project), DRAFT)
    await diagnostics(client, uri, 1)
    position = types.Position(2, len("t1 = measure"))
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), position))
    assert hover is not None
    text = hover.contents.value  # type: ignore[union-attr]
    for expected in ("**measure_matmul** on h100", "median 1 ms", "min 900 µs", "p90 1.1 ms", "over 20 samples",
                     "CV 0.02", "NVIDIA H100 80GB HBM3 on gpu-box", "2026-05-01", "min_samples 20"):  # fmt: skip
        assert expected in text, text
    missing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(5, len("t4 = measure")))
    )
    assert missing is not None and "no measurement for h100" in missing.contents.value  # type: ignore[union-attr]


async def test_a_cache_written_on_disk_rechecks_the_drafts_that_measure(client: RecordingClient, project: Path) -> None:
    draft = project / "draft.md"
    uri = open_draft(client, draft, DRAFT)
    assert [c for c, _ in codes(await diagnostics(client, uri, 1))] == ["T003"] * 5  # nothing measured yet
    committed_cache(project)  # margin measure, in a terminal
    change = types.FileEvent((project / CACHE_FILE).as_uri(), types.FileChangeType.Changed)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams([change]))
    items = await fresh_diagnostics(client, uri, 1, lambda items: len(items) == 3)
    assert codes(items) == [("T004", 3), ("T005", 4), ("T003", 5)]


@needs_jax
async def test_run_measurement_times_the_call_in_the_background_and_republishes(
    client: RecordingClient, project: Path
) -> None:
    call = "measure_matmul(bf16[8, 16], bf16[16, 16])"
    text = f"```calc\nt = {call}\nt.median < 10 s\n```\n"
    uri = open_draft(client, project / "tiny.md", text)
    assert [str(d.code) for d in await diagnostics(client, uri, 1)] == ["T003", "T003"]
    argument = {"uri": uri, "version": 1, "offset": text.index(call), "call": call, "method": FAST}
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams("margin.measure", [argument]))
    assert answer["status"] == "started" and answer["target"] == "local"
    end = await progress_end(client, answer["token"])
    assert end.message is not None and "median" in end.message and "on cpu" in end.message
    assert isinstance(client.progress_reports[answer["token"]][0], types.WorkDoneProgressBegin)
    # Re-published from the new entry: measured now (a pass, or T004 when the shared machine made it noisy).
    items = await fresh_diagnostics(client, uri, 1, lambda items: not any("no measurement" in d.message for d in items))
    assert {str(d.code) for d in items} <= {"T004", "T003"} and all("noisy" in d.message for d in items)
    entries = json.loads((project / CACHE_FILE).read_text("utf-8"))["entries"]
    (devices,) = entries.values()
    assert list(devices) == ["cpu"] and devices["cpu"]["provenance"]["method"]["min_samples"] == 3


@needs_jax
async def test_cancelling_the_progress_stops_the_measurement(client: RecordingClient, project: Path) -> None:
    call = "measure_matmul(bf16[8, 16], bf16[16, 16])"
    text = f"```calc\nt = {call}\n```\n"
    uri = open_draft(client, project / "long.md", text)
    await diagnostics(client, uri, 1)
    slow = {"min_samples": 3, "min_seconds": 600.0, "warmup": 1}  # would outlast the test if not stopped
    argument = {"uri": uri, "version": 1, "offset": text.index(call), "call": call, "method": slow}
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams("margin.measure", [argument]))
    token = answer["token"]
    while not any(getattr(r, "message", "").startswith("measuring") for r in client.progress_reports.get(token, [])):
        await asyncio.wait_for(client.wait_for_notification(types.PROGRESS), TIMEOUT_S)  # the worker is timing it
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token))
    end = await progress_end(client, answer["token"])
    assert end.message == "cancelled"
    assert not (project / CACHE_FILE).exists()


async def test_a_ray_target_is_measured_from_a_terminal_not_in_the_editor(
    client: RecordingClient, project: Path
) -> None:
    call = "measure_matmul(bf16[8, 16], bf16[16, 16])"
    text = f"```calc\nt = {call}\n```\n"
    uri = open_draft(client, project / "ray.md", text)
    await diagnostics(client, uri, 1)
    argument = {"uri": uri, "version": 1, "offset": text.index(call), "call": call, "target": "ray:auto"}
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams("margin.measure", [argument]))
    assert answer["status"] == "refused"
    assert (
        answer["reason"] == "target 'ray:auto' is a Ray cluster, measured from a terminal: margin measure --on ray:auto"
    )
    assert not (project / CACHE_FILE).exists()
