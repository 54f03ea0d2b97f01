"""Trust in the editor, through the real server: the editor's trust only restricts what the project allows.

A python calc block that would create a file proves whether anything ran.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.lsp.conftest import SERVER, RecordingClient, diagnostics, next_publish

PROFILE = "visual_studio_code"


def writes(path: Path) -> str:
    """A python calc block that creates ``path`` when it runs."""
    return f"```python calc\nopen({str(path)!r}, 'w').write('ran')\ndef f(x):\n    return x\n```\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "margin.toml").write_text("trust = true\n", "utf-8")  # the project trusts itself
    return tmp_path


async def start(client: RecordingClient, root: Path, options: dict[str, Any]) -> None:
    capabilities = client_capabilities(PROFILE)
    assert capabilities.text_document is not None
    capabilities.text_document.diagnostic = None  # pushed: each re-check's diagnostics arrive by themselves
    params = types.InitializeParams(capabilities=capabilities, root_uri=root.as_uri(),
                                    initialization_options={"margin": options})  # fmt: skip
    await client.initialize_session(params)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: RecordingClient) -> AsyncIterator[RecordingClient]:
    yield lsp_client
    await lsp_client.shutdown_session()


async def analysed(client: RecordingClient, root: Path) -> list[types.Diagnostic]:
    uri = (root / "draft.md").as_uri()
    text = writes(root / "ran")
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, text)))
    return await diagnostics(client, uri, 1)


async def test_a_restricted_editor_window_runs_nothing_even_when_the_project_trusts_itself(
    client: RecordingClient, project: Path
) -> None:
    await start(client, project, {"workspaceTrusted": False})
    (diagnostic,) = await analysed(client, project)
    assert diagnostic.code == "T001" and "trust" in diagnostic.message
    assert not (project / "ran").exists()


async def test_the_editor_setting_trust_false_overrides_the_project(client: RecordingClient, project: Path) -> None:
    await start(client, project, {"trust": False, "workspaceTrusted": True})
    (diagnostic,) = await analysed(client, project)
    assert diagnostic.code == "T001" and "trust" in diagnostic.message
    assert not (project / "ran").exists()


async def test_a_trusted_window_publishes_at_once_then_again_with_the_blocks_results(
    client: RecordingClient, project: Path
) -> None:
    await start(client, project, {"workspaceTrusted": True})
    text = writes(project / "ran") + "```calc\nc = xla_cost(f, f32[4, 4])\n```\n"
    uri = (project / "draft.md").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, text)))
    # First, without waiting for the analysis process: the block is pending, with a visible hint.
    first = await diagnostics(client, uri, 1)
    assert first[0].code == "T001" and first[0].message == "python calc block not run: running trusted code…"
    # Then the block's results: it ran (the control: this block does run when trusted) and nothing is pending.
    await next_publish(client, uri, lambda items: not any("running trusted code" in d.message for d in items))
    assert (project / "ran").read_text() == "ran"


async def test_the_editor_trusting_the_folder_grants_nothing_by_itself(client: RecordingClient, tmp_path: Path) -> None:
    await start(client, tmp_path, {"workspaceTrusted": True})  # no trust = true in the project
    (diagnostic,) = await analysed(client, tmp_path)
    assert diagnostic.code == "T001"
    assert not (tmp_path / "ran").exists()


async def test_a_restriction_holds_when_settings_come_again_without_it(client: RecordingClient, project: Path) -> None:
    await start(client, project, {"workspaceTrusted": False})
    client.set_configuration({"margin": {"tolerance": 0.1}})  # what workspace/configuration answers now
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    (diagnostic,) = await analysed(client, project)
    assert diagnostic.code == "T001"
    assert not (project / "ran").exists()
