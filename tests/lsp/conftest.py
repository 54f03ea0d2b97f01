"""The real server over stdio, driven by pytest-lsp under recorded editor profiles."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

WORKSPACE = Path(__file__).parent / "workspace"
PROFILES = ["neovim", "visual_studio_code"]


TIMEOUT_S = 30


def recording_client() -> LanguageClient:
    """A test client that also records every published diagnostics set by (uri, version)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = {}  # type: ignore[attr-defined]
    client.published_event = None  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published[(params.uri, params.version)] = params.diagnostics  # type: ignore[attr-defined]
        if client.published_event is not None:  # type: ignore[attr-defined]
            client.published_event.set()  # type: ignore[attr-defined]

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


@pytest_lsp.fixture(
    params=PROFILES,
    config=ClientServerConfig(server_command=[sys.executable, "-m", "server", "lsp"], client_factory=recording_client),
)
async def client(lsp_client: LanguageClient, request):  # type: ignore[no-untyped-def]
    """An initialised client with the editor's recorded capabilities."""
    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=WORKSPACE.as_uri(),
        workspace_folders=[types.WorkspaceFolder(WORKSPACE.as_uri(), "workspace")],
    )
    result = await lsp_client.initialize_session(params)
    lsp_client.margin_encoding = str(result.capabilities.position_encoding or "utf-16")  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


def uses_pull(client: LanguageClient) -> bool:
    """Whether the profile pulls diagnostics (then the server does not push)."""
    capabilities = client.capabilities
    return bool(capabilities and capabilities.text_document and capabilities.text_document.diagnostic)


def encoding(client: LanguageClient) -> str:
    """The position encoding the server chose (from its initialize result)."""
    return str(getattr(client, "margin_encoding", "utf-16"))


def character(line_text: str, column: int, encoding_name: str) -> int:
    """A code-point column in LSP units, computed independently of the server."""
    prefix = line_text[:column]
    if encoding_name == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding_name == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


async def open_document(client: LanguageClient, name: str, text: str, version: int = 1) -> str:
    """Open ``text`` as ``workspace/name``; return its uri."""
    uri = (WORKSPACE / name).as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", version, text)))
    return uri


async def diagnostics(client: LanguageClient, uri: str, version: int) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` at ``version``: pulled, or waited for until pushed."""
    if uses_pull(client):
        report = await asyncio.wait_for(
            client.text_document_diagnostic_async(types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))),
            TIMEOUT_S,
        )
        return list(report.items)
    if client.published_event is None:  # type: ignore[attr-defined]
        client.published_event = asyncio.Event()  # type: ignore[attr-defined]
    event: asyncio.Event = client.published_event  # type: ignore[attr-defined]
    while True:
        event.clear()  # the handler runs on this loop, so nothing lands between clear and check
        if (uri, version) in client.published:  # type: ignore[attr-defined]
            return list(client.published[(uri, version)])  # type: ignore[attr-defined]
        await asyncio.wait_for(event.wait(), TIMEOUT_S)


async def next_publish(client: LanguageClient, uri: str, accept) -> list[types.Diagnostic]:  # type: ignore[no-untyped-def]
    """Wait for pushed diagnostics of ``uri`` (any version) that ``accept`` approves."""
    if client.published_event is None:  # type: ignore[attr-defined]
        client.published_event = asyncio.Event()  # type: ignore[attr-defined]
    event: asyncio.Event = client.published_event  # type: ignore[attr-defined]
    while True:
        event.clear()
        current = client.diagnostics.get(uri)
        if current is not None and accept(list(current)):
            return list(current)
        await asyncio.wait_for(event.wait(), TIMEOUT_S)
