"""An internal error in one statement (E999, a bug in Margin) is shown with ``window/showMessage``
once per document per session, not per keystroke; the rest of the draft is still checked.

The real server over stdio, started by ``tests/lsp/patched_server.py`` with ``sqrt`` broken
(``MARGIN_TEST_BROKEN_CALL``), so that each statement calling it raises inside the engine.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.lsp.conftest import PROFILES, TIMEOUT_S, RecordingClient, diagnostics, open_document

SERVER = ClientServerConfig(
    [sys.executable, str(Path(__file__).with_name("patched_server.py"))],
    client_factory=RecordingClient,
    server_env={**os.environ, "MARGIN_TEST_BROKEN_CALL": "sqrt"},
)
DRAFT = "# Sizes\n\n```calc\na = 2 s\nb = sqrt(4)\nc = a * 2\n```\n\nIt takes `c = 4 s`.\n"


@pytest_lsp.fixture(params=PROFILES, config=SERVER)
async def client(lsp_client: RecordingClient, request: pytest.FixtureRequest) -> AsyncIterator[RecordingClient]:
    await lsp_client.begin_session(request.param)
    yield lsp_client
    await lsp_client.shutdown_session()


async def _shown(client: RecordingClient, count: int) -> list[types.ShowMessageParams]:
    """Wait until ``count`` messages have been shown (never sleeps: woken by each one)."""
    async with asyncio.timeout(TIMEOUT_S):
        while len(client.messages) < count:
            await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    return list(client.messages)


def _edit(client: RecordingClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version), [types.TextDocumentContentChangeWholeDocument(text)]))  # fmt: skip


async def test_an_internal_error_in_one_statement_is_shown_once_per_document(client: RecordingClient) -> None:
    uri = await open_document(client, "internal.md", DRAFT)
    (shown,) = await _shown(client, 1)
    assert shown.type in (types.MessageType.Error, types.MessageType.Warning)
    assert "internal error" in shown.message and "internal.md" in shown.message
    assert "line 5" in shown.message and "please report" in shown.message, shown.message
    assert "RuntimeError" in shown.message
    found = await diagnostics(client, uri, 1)
    assert [d.code for d in found] == ["E999"] and found[0].range.start.line == 4  # the others are checked
    # Typing on: the error is still there, published with each version, but not shown again.
    _edit(client, uri, 2, DRAFT + "\nMore text.\n")
    _edit(client, uri, 3, DRAFT + "\nMore text, and `sqrt(9) = 3`.\n")
    assert [d.code for d in await diagnostics(client, uri, 3)] == ["E999", "E999"]
    assert len(client.messages) == 1, client.messages  # shown before publishing: nothing is on its way
    # Another document with an internal error is told about once too.
    other = await open_document(client, "internal-too.md", DRAFT)
    second = (await _shown(client, 2))[1]
    assert "internal-too.md" in second.message
    await diagnostics(client, other, 1)
    assert len(client.messages) == 2


async def test_a_draft_without_internal_errors_shows_nothing(client: RecordingClient) -> None:
    uri = await open_document(client, "fine.md", "```calc\na = 2 s\n```\n\nIt takes `a = 2 s`.\n")
    assert await diagnostics(client, uri, 1) == []
    assert client.messages == []
