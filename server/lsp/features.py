"""LSP features: each handler gets state, calls one core query, converts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from scaling_core import DocumentAnalysis
from scaling_core.queries.actions import code_actions
from scaling_core.queries.assist import completions, signature_at
from scaling_core.queries.hover import hover_at
from scaling_core.queries.navigation import Symbol, binding_at, document_symbols, is_valid_name, references_to
from server.launch import collector_paused
from server.lsp.convert import PositionConverter, diagnostic
from server.lsp.documents import Document, path_to_uri

if TYPE_CHECKING:
    from server.lsp.app import MarginServer

_COMPLETION_KIND = {
    "variable": types.CompletionItemKind.Variable, "field": types.CompletionItemKind.Field,
    "function": types.CompletionItemKind.Function, "unit": types.CompletionItemKind.Unit,
    "chip": types.CompletionItemKind.Module,
}  # fmt: skip


def register(server: MarginServer) -> None:
    """Register every feature on ``server``."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MarginServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.state.documents[item.uri] = Document(item.uri, item.version, item.text)
        ls.state.schedule(item.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MarginServer, params: types.DidChangeTextDocumentParams) -> None:
        from server.lsp.documents import apply_changes

        uri = params.text_document.uri
        document = ls.state.documents.get(uri)
        if document is None:
            return
        ls.state.documents[uri] = apply_changes(document, params.text_document.version, params.content_changes, ls.encoding)
        if ls.state.config.check_frequency == "edit":
            ls.state.schedule(uri)
            for other, open_document in list(ls.state.documents.items()):
                if other != uri and 'import "' in open_document.text:
                    ls.state.invalidate(other)  # its imports may have changed

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MarginServer, params: types.DidSaveTextDocumentParams) -> None:
        if ls.state.config.check_frequency in ("edit", "save"):
            ls.state.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MarginServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.state.close(params.text_document.uri)
        if not ls.pull:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="margin", inter_file_dependencies=True, workspace_diagnostics=True),
    )
    async def document_diagnostic(ls: MarginServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        document, analysis, converter = snapshot
        result_id = f"{document.uri}@{document.version}"
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        items = [diagnostic(converter, document.uri, d) for d in analysis.diagnostics]
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: MarginServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
        return types.WorkspaceDiagnosticReport(items=await _check_workspace(ls, params.work_done_token))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MarginServer, params: types.HoverParams) -> types.Hover | None:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return None
        document, analysis, converter = snapshot
        # Off the event loop: the first derivation of a formula imports SymPy (~0.2 s).
        text = await asyncio.get_running_loop().run_in_executor(None, _hover_text, analysis, converter.offset(params.position))
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text)) if text else None

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hint(ls: MarginServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return []
        document, analysis, converter = snapshot
        wanted = converter.span(params.range)
        hints = []
        for value in analysis.values:
            if wanted.start <= value.span.end <= wanted.end:
                label = f" {value.display}" if value.inline else f"  = {value.display}"
                hints.append(types.InlayHint(converter.position(value.span.end), label, types.InlayHintKind.Type))
        for check in analysis.checks:
            if check.kind == "claim" and check.status == "pass" and wanted.start <= check.span.end <= wanted.end:
                hints.append(types.InlayHint(converter.position(check.span.end), " ✓", tooltip=check.message))
        return hints

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]),
    )
    async def code_action(ls: MarginServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return []
        document, analysis, converter = snapshot
        span = converter.span(params.range)
        result = []
        for action in code_actions(analysis, span.start, span.end):
            edits = [types.TextEdit(converter.range(s), text) for s, text in action.edits]
            kind = types.CodeActionKind.QuickFix if action.kind == "quickfix" else types.CodeActionKind.Refactor
            fixed = [d for d in params.context.diagnostics if d.code == action.fixes] if action.fixes else None
            edit = types.WorkspaceEdit(changes={document.uri: edits})
            result.append(types.CodeAction(action.title, kind=kind, diagnostics=fixed, is_preferred=action.preferred or None, edit=edit))
        return result

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
    async def completion(ls: MarginServer, params: types.CompletionParams) -> list[types.CompletionItem]:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return []
        document, analysis, converter = snapshot
        offset = converter.offset(params.position)
        return [
            types.CompletionItem(c.label, kind=_COMPLETION_KIND[c.kind], detail=c.detail, documentation=c.documentation or None)
            for c in completions(analysis, offset)
        ]

    @server.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpOptions(trigger_characters=["(", ","]))
    async def signature_help(ls: MarginServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return None
        document, analysis, converter = snapshot
        found = signature_at(analysis, converter.offset(params.position))
        if found is None:
            return None
        parameters = [types.ParameterInformation(label=p) for p in found.parameters]
        info = types.SignatureInformation(found.label, documentation=found.documentation, parameters=parameters)
        return types.SignatureHelp([info], active_signature=0, active_parameter=min(found.active, max(len(parameters) - 1, 0)))

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: MarginServer, params: types.DefinitionParams) -> types.Location | None:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return None
        document, analysis, converter = snapshot
        binding = binding_at(analysis, converter.offset(params.position))
        if binding is None:
            return None
        return await _location(ls, binding.path, binding.span)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: MarginServer, params: types.ReferenceParams) -> list[types.Location]:
        edits = await _occurrences(ls, params.text_document.uri, params.position, params.context.include_declaration)
        return [types.Location(uri, r) for uri, ranges in edits.items() for r in ranges]

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    async def rename(ls: MarginServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        if not is_valid_name(params.new_name):
            raise ValueError(f"'{params.new_name}' is not a valid name")
        found = await _occurrences(ls, params.text_document.uri, params.position, True)
        if not found:
            return None
        return types.WorkspaceEdit(changes={uri: [types.TextEdit(r, params.new_name) for r in ranges] for uri, ranges in found.items()})

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(ls: MarginServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return []
        document, analysis, converter = snapshot

        def convert(symbol: Symbol) -> types.DocumentSymbol:
            kind = types.SymbolKind.Namespace if symbol.kind == "problem" else types.SymbolKind.Variable
            return types.DocumentSymbol(symbol.name, kind, converter.range(symbol.span), converter.range(symbol.selection),
                                        detail=symbol.detail, children=[convert(c) for c in symbol.children])  # fmt: skip

        return [convert(s) for s in document_symbols(analysis)]

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: MarginServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        snapshot = await _snapshot(ls, params.text_document.uri)
        if snapshot is None:
            return []
        document, analysis, converter = snapshot
        marks = {"pass": "✓", "fail": "✗", "untested": "○"}
        return [
            types.CodeLens(converter.range(p.title_span),
                           types.Command(f"{marks[p.status]} {p.status}: {p.passed}/{p.total} checks pass", ""))
            for p in analysis.problems
        ]  # fmt: skip


def _hover_text(analysis: DocumentAnalysis, offset: int) -> str | None:
    with collector_paused():
        return hover_at(analysis, offset)


async def _snapshot(ls: MarginServer, uri: str) -> tuple[Document, DocumentAnalysis, PositionConverter] | None:
    """The current version of ``uri``, its analysis and its position converter."""
    current = await ls.state.analysis(uri)
    if current is None:
        return None
    document, analysis = current
    return document, analysis, document.converter(ls.encoding)


async def _check_workspace(ls: MarginServer, token: types.ProgressToken | None) -> list[types.WorkspaceDocumentDiagnosticReport]:
    """Every draft of the workspace (open ones as edited), with ``$/progress`` reports."""
    import asyncio

    from server.lsp.documents import Document
    from server.workspace import Project, discover, read_text

    if ls.state.root is None:
        return []
    files = discover([ls.state.root], Project(ls.state.root, ls.state.config, None))
    window = ls.client_capabilities.window
    if token is None and window is not None and window.work_done_progress:
        token = f"margin-workspace-{id(files)}"
        try:
            await ls.work_done_progress.create_async(token)
        except Exception:  # noqa: BLE001 - progress is optional; the check still runs
            token = None
    if token is not None:
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin("Margin: checking the workspace", percentage=0))
    reports: list[types.WorkspaceDocumentDiagnosticReport] = []
    loop = asyncio.get_running_loop()
    try:
        for number, path in enumerate(files, start=1):
            uri = path.resolve().as_uri()
            document = ls.state.documents.get(uri) or Document(uri, 0, read_text(path))
            analysis = await loop.run_in_executor(None, ls.state.analyze_plain, document)
            converter = document.converter(ls.encoding)
            items = [diagnostic(converter, uri, d) for d in analysis.diagnostics]
            version = document.version if uri in ls.state.documents else None
            reports.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=items, version=version))
            if token is not None:
                ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{number}/{len(files)} {path.name}", percentage=int(100 * number / len(files))))  # fmt: skip
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{len(reports)} drafts checked"))
    return reports


async def _location(ls: MarginServer, path: str, span) -> types.Location:
    uri = path_to_uri(path)
    current = await ls.state.analysis(uri) if uri in ls.state.documents else None
    if current is not None:
        return types.Location(uri, current[0].converter(ls.encoding).range(span))
    from scaling_core import LineIndex
    from server.lsp.convert import PositionConverter
    from server.workspace import read_text

    return types.Location(uri, PositionConverter(LineIndex(read_text(Path(path))), ls.encoding).range(span))


async def _occurrences(ls: MarginServer, uri: str, position: types.Position, include_definition: bool) -> dict[str, list[types.Range]]:
    """Every range naming the definition at ``position``, in this and other open documents."""
    snapshot = await _snapshot(ls, uri)
    if snapshot is None:
        return {}
    _document, analysis, converter = snapshot
    target = binding_at(analysis, converter.offset(position))
    if target is None:
        return {}
    found: dict[str, list[types.Range]] = {}
    for other_uri in list(ls.state.documents):
        other = await ls.state.analysis(other_uri)
        if other is None:
            continue
        other_document, other_analysis = other
        spans = references_to(other_analysis, target, include_definition=include_definition)
        if spans:
            converter = other_document.converter(ls.encoding)
            found[other_uri] = [converter.range(s) for s in spans]
    return found
