"""Workspace diagnostics never skip a path silently: a file or folder the walk could not read gets a
report of its own, holding one warning that says why (docs/editors.md, "Workspace diagnostics").

The real server over stdio, rooted at a workspace of the test's own; a path is made unreadable by
the ``unreadable`` fixture (its mode) or, when the tests run as root, by the server's launcher
(``tests/lsp/patched_server.py``), since root may read anything.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import cast

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from tests.lsp.conftest import PROFILES, TIMEOUT_S, RecordingClient

LAUNCHER = Path(__file__).with_name("patched_server.py")
Start = Callable[[Path, list[Path]], Awaitable[RecordingClient]]


@pytest_asyncio.fixture(params=PROFILES)
async def start(request: pytest.FixtureRequest, unreadable: Callable[[Path], None]) -> AsyncIterator[Start]:
    """Start a server rooted at a folder, with the given paths unreadable (the editor profile: the param)."""
    started: list[RecordingClient] = []

    async def begin(root: Path, denied: list[Path]) -> RecordingClient:
        for path in denied:
            unreadable(path)
        env = dict(os.environ)
        if os.geteuid() == 0:
            env["MARGIN_TEST_UNREADABLE"] = os.pathsep.join(str(p) for p in denied)
        config = ClientServerConfig([sys.executable, str(LAUNCHER)], client_factory=RecordingClient, server_env=env)
        client = cast(RecordingClient, await config.start())
        started.append(client)
        params = types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), "workspace")],
        )
        await client.initialize_session(params)
        return client

    yield begin
    for client in started:
        await client.shutdown_session()
        await client.stop()


async def _workspace_report(client: RecordingClient) -> dict[str, types.WorkspaceFullDocumentDiagnosticReport]:
    import asyncio

    report = await asyncio.wait_for(
        client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[])), TIMEOUT_S
    )
    return {item.uri: item for item in report.items if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)}


async def test_unreadable_files_and_folders_each_get_a_warning(start: Start, tmp_path: Path) -> None:
    (tmp_path / "wrong.md").write_text("It is `2 * 3 = 7`.\n", "utf-8")
    (tmp_path / "secret.md").write_text("It is `2 * 3 = 6`.\n", "utf-8")
    (tmp_path / "broken.md").write_bytes(b"\xff\xfe" + "It is".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    private = tmp_path / "private"
    private.mkdir()
    (private / "inside.md").write_text("It is `2 * 3 = 6`.\n", "utf-8")
    client = await start(tmp_path, [tmp_path / "secret.md", private])
    reports = await _workspace_report(client)

    assert [d.code for d in reports[(tmp_path / "wrong.md").as_uri()].items] == ["C001"]  # the others are checked
    assert (private / "inside.md").as_uri() not in reports  # nothing inside a folder that cannot be listed
    expected = {
        "secret.md": "cannot read it: Permission denied",
        "private": "cannot read the folder: Permission denied",
        "broken.md": "cannot read it: not valid UTF-16 (little-endian)",
    }
    for name, reason in expected.items():
        (warning,) = reports[(tmp_path / name).as_uri()].items
        assert warning.severity == types.DiagnosticSeverity.Warning and warning.source == "margin"
        assert warning.range == types.Range(types.Position(0, 0), types.Position(0, 0))
        assert warning.message.startswith(f"{name}: skipped, {reason}"), warning.message
        assert "not checked" in warning.message
    assert len(reports) == 4


async def test_an_open_draft_that_cannot_be_read_on_disk_is_checked_as_edited(start: Start, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("It is `2 * 3 = 6`.\n", "utf-8")
    client = await start(tmp_path, [secret])
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(secret.as_uri(), "markdown", 3, "It is `2 * 3 = 7`.\n")))  # fmt: skip
    report = (await _workspace_report(client))[secret.as_uri()]
    assert [d.code for d in report.items] == ["C001"] and report.version == 3
