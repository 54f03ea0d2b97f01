"""The real server over stdio, driven by pytest-lsp under recorded editor profiles.

Starting a server costs about half a second, so tests share one per module
and editor profile (``client``; such a test is marked ``@SHARED_SERVER`` and
opens documents no other test of its module opens).  A test that changes
settings, stops the server or checks its start-up state gets its own
(``fresh_client``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

WORKSPACE = Path(__file__).parent / "workspace"
PROFILES = ["neovim", "visual_studio_code"]
TIMEOUT_S = 30
#: Runs a test on its module's event loop, where the shared ``client`` lives.
SHARED_SERVER = pytest.mark.asyncio(loop_scope="module")


class RecordingClient(LanguageClient):
    """pytest-lsp's client, also recording every published diagnostics set by (uri, version)."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.published: dict[tuple[str, int | None], Sequence[types.Diagnostic]] = {}
        #: Set whenever diagnostics are published (waiters clear it, then check).
        self.published_event = asyncio.Event()
        #: The position encoding the server chose (from its initialize result).
        self.server_encoding = "utf-16"
        #: How many times the server asked for code lenses again (``workspace/codeLens/refresh``).
        self.code_lens_refreshes = 0
        register_lsp_features(self, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record,
                                     types.WORKSPACE_CODE_LENS_REFRESH: _count_refresh})  # fmt: skip

    async def begin_session(self, profile: str) -> None:
        """Initialise a session with the editor's recorded capabilities, rooted at :data:`WORKSPACE`."""
        params = types.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=WORKSPACE.as_uri(),
            workspace_folders=[types.WorkspaceFolder(WORKSPACE.as_uri(), "workspace")],
        )
        result = await self.initialize_session(params)
        self.server_encoding = str(result.capabilities.position_encoding or "utf-16")


def _record(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published[(params.uri, params.version)] = params.diagnostics
    client.published_event.set()


def _count_refresh(client: RecordingClient, params: None) -> None:
    client.code_lens_refreshes += 1


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "server", "lsp"], client_factory=RecordingClient)


@pytest_lsp.fixture(params=PROFILES, scope="module", config=SERVER)
async def client(lsp_client: RecordingClient, request: pytest.FixtureRequest) -> AsyncIterator[RecordingClient]:
    """One initialised server per test module and editor profile, shared by its ``@SHARED_SERVER`` tests."""
    await lsp_client.begin_session(request.param)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(params=PROFILES, config=SERVER)
async def fresh_client(lsp_client: RecordingClient, request: pytest.FixtureRequest) -> AsyncIterator[RecordingClient]:
    """A server of the test's own: for changing settings, stopping it, or checking its start-up state."""
    await lsp_client.begin_session(request.param)
    yield lsp_client
    await lsp_client.shutdown_session()


def uses_pull(client: LanguageClient) -> bool:
    """Whether the profile pulls diagnostics (then the server does not push)."""
    capabilities = client.capabilities
    return bool(capabilities and capabilities.text_document and capabilities.text_document.diagnostic)


def encoding(client: RecordingClient) -> str:
    """The position encoding the server chose (from its initialize result)."""
    return client.server_encoding


def character(line_text: str, column: int, encoding_name: str) -> int:
    """A code-point column in LSP units, computed independently of the server."""
    prefix = line_text[:column]
    if encoding_name == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding_name == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


async def open_document(client: RecordingClient, name: str, text: str, version: int = 1) -> str:
    """Open ``text`` as ``workspace/name``; return its uri."""
    uri = (WORKSPACE / name).as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", version, text))
    )
    return uri


async def diagnostics(client: RecordingClient, uri: str, version: int) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` at ``version``: pulled, or waited for until pushed."""
    if uses_pull(client):
        report = await asyncio.wait_for(
            client.text_document_diagnostic_async(types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))),
            TIMEOUT_S,
        )
        return list(report.items)
    event = client.published_event
    while True:
        event.clear()  # the handler runs on this loop, so nothing lands between clear and check
        if (uri, version) in client.published:
            return list(client.published[(uri, version)])
        await asyncio.wait_for(event.wait(), TIMEOUT_S)


async def next_publish(
    client: RecordingClient, uri: str, accept: Callable[[list[types.Diagnostic]], bool]
) -> list[types.Diagnostic]:
    """Wait for pushed diagnostics of ``uri`` (any version) that ``accept`` approves."""
    event = client.published_event
    while True:
        event.clear()
        current = client.diagnostics.get(uri)
        if current is not None and accept(list(current)):
            return list(current)
        await asyncio.wait_for(event.wait(), TIMEOUT_S)
