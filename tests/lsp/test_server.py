"""End-to-end: the real server over stdio, under the Neovim and VS Code profiles.

The ``@SHARED_SERVER`` tests share one server per profile, so each opens documents of its own names.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.lsp.conftest import (
    SHARED_SERVER,
    WORKSPACE,
    RecordingClient,
    character,
    diagnostics,
    encoding,
    next_publish,
    open_document,
    uses_pull,
)

DRAFT = (
    "# 速度 🚀 draft\u2028still the title line\n"
    "\n"
    "```calc\n"
    "t = 1.7e7 byte / (9e10 byte/s)\n"
    "```\n"
    "\n"
    "速度 🚀🚀 it takes about **170 ms**<!-- ≈ t --> and `2 * 3 = 7` 中文.\n"
)


@SHARED_SERVER
async def test_diagnostics_have_exact_ranges_with_emoji_cjk_and_line_separators(client: RecordingClient) -> None:
    uri = await open_document(client, "draft.md", DRAFT)
    found = await diagnostics(client, uri, 1)
    line = DRAFT.split("\n")[6]
    claim = line.index("170 ms")
    value = line.index("= 7`") + 2
    name = encoding(client)
    expected = {
        ("C001", 6, character(line, claim, name), 6, character(line, claim + 6, name)),
        ("C001", 6, character(line, value, name), 6, character(line, value + 1, name)),
    }
    actual = {
        (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) for d in found
    }
    assert actual == expected
    assert encoding(client) == ("utf-8" if client.capabilities.general.position_encodings else "utf-16")


@SHARED_SERVER
async def test_inlay_hints_show_values_and_passing_claims(client: RecordingClient) -> None:
    text = "```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\nAbout 189 µs<!-- ≈ t -->.\n"
    uri = await open_document(client, "hints.md", text)
    await diagnostics(client, uri, 1)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(10, 0))
        )
    )
    labels = {(h.position.line, h.label) for h in hints}
    assert (1, "  = 189 µs") in labels
    assert (4, " ✓") in labels


@SHARED_SERVER
async def test_hover_shows_the_derivation(client: RecordingClient) -> None:
    text = "```calc\nt = allgather_time(bf16[1024, 4096].bytes, 4, tpu_v5e)\n```\n"
    uri = await open_document(client, "hover.md", text)
    await diagnostics(client, uri, 1)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(1, 2))
    )
    assert hover is not None
    assert "93.21 µs" in hover.contents.value
    assert "Max(V/W_ici, X*t_hop/2)" in hover.contents.value
    assert "https://jax-ml.github.io/scaling-book/tpus/" in hover.contents.value


@SHARED_SERVER
async def test_hover_after_typing_above_the_block(client: RecordingClient) -> None:
    # The block's results are replayed at their new place; the derivation's tree is shifted on demand.
    text = "# T\n\n## Section\n\n```calc\nt = allgather_time(bf16[1024, 4096].bytes, 4, tpu_v5e)\n```\n"
    uri = await open_document(client, "typed.md", text)
    await diagnostics(client, uri, 1)
    for version, column in enumerate(range(3, 9), start=2):
        where = types.Position(0, column)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangePartial(range=types.Range(where, where), text="x")],
        ))  # fmt: skip
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(5, 2))
    )
    assert (
        hover is not None and "93.21 µs" in hover.contents.value and "Max(V/W_ici, X*t_hop/2)" in hover.contents.value
    )


@SHARED_SERVER
async def test_quick_fix_makes_the_diagnostic_go_away_and_changes_nothing_else(client: RecordingClient) -> None:
    uri = await open_document(client, "fix.md", DRAFT)
    failing = next(d for d in await diagnostics(client, uri, 1) if "170 ms" in d.message)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), failing.range, types.CodeActionContext([failing]))
    )
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)
    (edit,) = fix.edit.changes[uri]
    assert edit.range == failing.range
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            [types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)],
        )
    )
    after = await diagnostics(client, uri, 2)
    assert [d.message for d in after if "ms" in d.message and d.code == "C001"] == []
    assert [d.code for d in after] == ["C001"]  # the unrelated `2 * 3 = 7` is untouched


@SHARED_SERVER
async def test_rename_across_two_files(client: RecordingClient) -> None:
    constants = await open_document(client, "constants.md", "# Constants\n\n```calc\nW = 4.5e10 byte/s\n```\n")
    chapter = await open_document(client, "chapter.md", '```calc\nimport "constants.md"\nt = 1.7e7 byte / W\n```\n')
    await diagnostics(client, chapter, 1)
    edit = await client.text_document_rename_async(
        types.RenameParams(types.TextDocumentIdentifier(chapter), types.Position(2, 17), "W_ici")
    )
    assert edit is not None
    assert [(e.range.start.line, e.range.start.character, e.new_text) for e in edit.changes[constants]] == [
        (3, 0, "W_ici")
    ]
    assert [(e.range.start.line, e.range.start.character, e.new_text) for e in edit.changes[chapter]] == [
        (2, 17, "W_ici")
    ]


@SHARED_SERVER
async def test_no_stale_diagnostics_after_rapid_edits(client: RecordingClient) -> None:
    uri = await open_document(client, "rapid.md", "`2 * 3 = 6`\n")
    await diagnostics(client, uri, 1)
    for version in range(2, 22):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text=f"`2 * 3 = {version}`\n")],
            )
        )
    final = await diagnostics(client, uri, 21)
    assert [d.code for d in final] == ["C001"]
    assert "not = 21" in final[0].message
    published = [version for (published_uri, version) in client.published if published_uri == uri]
    assert published == sorted(published), "an older version was published after a newer one"


@SHARED_SERVER
async def test_completion_signature_symbols_and_definition(client: RecordingClient) -> None:
    text = "```calc\nB = 128\nx = allgather_time(B, 4, h100)\ny = h100.\n```\n\n**Question 1:** `B * 2 = 256`\n"
    uri = await open_document(client, "assist.md", text)
    await diagnostics(client, uri, 1)
    items = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), types.Position(3, 9))
    )
    labels = {i.label for i in (items.items if hasattr(items, "items") else items)}
    assert {"flops_bf16", "hbm_bw"} <= labels
    help_ = await client.text_document_signature_help_async(
        types.SignatureHelpParams(types.TextDocumentIdentifier(uri), types.Position(2, 22))
    )
    assert (
        help_ is not None and help_.signatures[0].label == "allgather_time(V, X, chip)" and help_.active_parameter == 1
    )
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    # `x = allgather_time(B, 4, h100)` fails (N003: h100 has no ICI), so it defines nothing.
    assert [(s.name, s.kind, s.detail) for s in symbols] == [
        ("B", types.SymbolKind.Variable, "128"),
        ("y", types.SymbolKind.Variable, "h100"),
        ("Question 1", types.SymbolKind.Namespace, "pass: 1/1 checks pass"),
    ]
    location = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(2, 19))
    )
    assert location is not None and location.range.start.line == 1


@SHARED_SERVER
async def test_importers_are_rechecked_when_an_import_changes(client: RecordingClient) -> None:
    # Neither is on disk: the import is resolved from the open documents.
    constants = await open_document(client, "imported.md", "```calc\nW = 4.5e10 byte/s\n```\n")
    chapter = await open_document(
        client, "importer.md", '```calc\nimport "imported.md"\n1.7e7 byte / W ≈ 378 us\n```\n'
    )
    assert await diagnostics(client, chapter, 1) == []
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=constants, version=2),
            [types.TextDocumentContentChangeWholeDocument(text="```calc\nW = 9e10 byte/s\n```\n")],
        )
    )
    await diagnostics(client, constants, 2)
    if uses_pull(client):
        rechecked = await diagnostics(client, chapter, 1)
    else:
        rechecked = await next_publish(client, chapter, lambda items: bool(items))
    assert [d.code for d in rechecked] == ["C001"]


async def test_settings_from_workspace_configuration_apply(fresh_client: RecordingClient) -> None:
    client = fresh_client  # settings are per server: this test has its own
    uri = await open_document(client, "settings.md", "`5 * 2 ≈ 10.9` is close enough.\n")
    assert [d.code for d in await diagnostics(client, uri, 1)] == ["C001"]  # 9% is outside the default 5%
    client.set_configuration({"tolerance": 0.2, "severity": {"N008": "off"}}, section="margin")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    if uses_pull(client):
        assert await diagnostics(client, uri, 1) == []
    else:
        assert await next_publish(client, uri, lambda items: not items) == []


@SHARED_SERVER
async def test_workspace_diagnostics_report_progress(client: RecordingClient) -> None:
    report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    by_name = {item.uri.rsplit("/", 1)[-1]: item for item in report.items}
    assert {"constants.md", "wrong.md"} <= set(by_name)
    assert [d.code for d in by_name["wrong.md"].items] == ["C001"]
    assert list(by_name["constants.md"].items) == []
    tokens = [
        t for t, reports in client.progress_reports.items() if getattr(reports[0], "title", "").startswith("Margin")
    ]
    if client.capabilities.window is None or not client.capabilities.window.work_done_progress:
        assert tokens == []
        return
    (token,) = tokens
    kinds = [type(r).__name__ for r in client.progress_reports[token]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert "WorkDoneProgressReport" in kinds
    assert (WORKSPACE / "wrong.md").is_file()


def test_editor_settings_layer_over_the_project_config() -> None:
    from scaling_core import Config
    from scaling_core.diagnostics import Severity
    from server.lsp.settings import settings_to_config

    project = Config(tolerance=0.02, severity={"U005": Severity.ERROR}, exclude=("drafts/**",))
    config, problems = settings_to_config(
        project, {"margin": {"command": ["margin", "lsp"], "codeSpans": False, "severity": {"N008": "off"}}}
    )
    assert problems == []
    assert (config.tolerance, config.code_spans, config.exclude) == (0.02, False, ("drafts/**",))
    assert config.severity == {"U005": Severity.ERROR, "N008": None}
    _config, problems = settings_to_config(project, {"tolerance": "lots"})
    assert problems and "tolerance" in problems[0]


def test_an_empty_lua_table_is_empty_settings() -> None:
    """Neovim encodes an empty Lua table as a JSON array: `margin = {}` must not be an error."""
    from scaling_core import Config
    from server.lsp.settings import settings_to_config

    config, problems = settings_to_config(Config(tolerance=0.02), {"margin": []})
    assert problems == [] and config.tolerance == 0.02
    _config, problems = settings_to_config(Config(), {"margin": [1, 2]})
    assert problems == ["settings must be an object"]


def test_imports_see_open_documents_before_the_disk(tmp_path: Path) -> None:
    """One loader for the CLI and the server; the server's overlay of open documents comes first."""
    from scaling_core import Config
    from server.workspace import Project, make_loader

    (tmp_path / "constants.md").write_text("on disk", "utf-8")
    (tmp_path / "sub").mkdir()
    importer = str(tmp_path / "sub" / "chapter.md")
    edited, unsaved = str(tmp_path / "constants.md"), str(tmp_path / "sub" / "unsaved.md")
    overlay = {edited: "as edited", unsaved: "not saved yet"}
    editor = make_loader(tmp_path, overlay, display=str)  # the root first, then beside the importer
    assert editor(importer, "constants.md") == (edited, "as edited")
    assert editor(importer, "unsaved.md") == (unsaved, "not saved yet")
    assert editor(importer, "missing.md") is None
    assert make_loader(None, overlay, display=str)(importer, "unsaved.md") == (unsaved, "not saved yet")
    assert make_loader(None, overlay, display=str)(importer, "../constants.md") is None  # no root: its folder only
    cli = make_loader(Project(tmp_path, Config(), None))
    found = cli(importer, "constants.md")
    assert found is not None and found[1] == "on disk"
    assert cli(importer, "unsaved.md") is None
