"""LSP features: each handler gets state, calls one core query, converts.

A request about one document starts the same way everywhere: wait for the
analysis of its current version, answer "nothing" when it is not open.  That
preamble is :func:`_on_snapshot`, once; the handler gets a :class:`Snapshot`.

Registering the handlers needs no engine: the names they use from it are bound
by :func:`load_engine` right after ``initialize`` is answered, so that answer
comes without loading the engine (docs/editors.md, "How it stays fast").  An
engine-side import goes in both lists there, never at the top of the module.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from lsprotocol import types

from server.collector import collector_paused
from server.lsp import measure_features
from server.lsp.server import MarginServer

if TYPE_CHECKING:  # the engine side: bound at run time by load_engine() below, with the same imports
    from scaling_core import DocumentAnalysis, LineIndex, Span
    from scaling_core.document.lookup import checks_index, values_index
    from scaling_core.queries.actions import code_actions
    from scaling_core.queries.assist import completions, signature_at
    from scaling_core.queries.completion import LIMIT
    from scaling_core.queries.coverage_model import Concept, FileCoverage
    from scaling_core.queries.coverage_views import heading_lenses
    from scaling_core.queries.hover import hover_at
    from scaling_core.queries.navigation import Symbol, binding_at, document_symbols, is_valid_name, references_to
    from server.lsp.convert import PositionConverter
    from server.lsp.documents import Document, InvalidEdit, apply_changes, path_to_uri, whole_text_again
    from server.lsp.workspace_check import check_workspace
    from server.workspace import read_text


def load_engine() -> None:
    """Bind the engine names the handlers use, once ``initialize`` is answered (never at start-up).

    The same imports as under ``TYPE_CHECKING`` above (tests/lsp/test_startup.py
    checks); no handler runs before this (:meth:`MarginServer.load_engine`).
    """
    global DocumentAnalysis, LineIndex, Span, checks_index, values_index, code_actions, completions
    global signature_at, LIMIT, Concept, FileCoverage, heading_lenses, hover_at, Symbol, binding_at
    global document_symbols, is_valid_name, references_to, PositionConverter, Document, InvalidEdit
    global apply_changes, path_to_uri, whole_text_again, check_workspace, read_text
    from scaling_core import DocumentAnalysis, LineIndex, Span
    from scaling_core.document.lookup import checks_index, values_index
    from scaling_core.queries.actions import code_actions
    from scaling_core.queries.assist import completions, signature_at
    from scaling_core.queries.completion import LIMIT
    from scaling_core.queries.coverage_model import Concept, FileCoverage
    from scaling_core.queries.coverage_views import heading_lenses
    from scaling_core.queries.hover import hover_at
    from scaling_core.queries.navigation import Symbol, binding_at, document_symbols, is_valid_name, references_to
    from server.lsp.convert import PositionConverter
    from server.lsp.documents import Document, InvalidEdit, apply_changes, path_to_uri, whole_text_again
    from server.lsp.workspace_check import check_workspace
    from server.workspace import read_text


_Result = TypeVar("_Result")

_COMPLETION_KIND = {
    "variable": types.CompletionItemKind.Variable, "field": types.CompletionItemKind.Field,
    "function": types.CompletionItemKind.Function, "unit": types.CompletionItemKind.Unit,
    "chip": types.CompletionItemKind.Module,
}  # fmt: skip


class Snapshot(NamedTuple):
    """One document version as a request sees it: the text, its analysis, its position converter."""

    document: Document
    analysis: DocumentAnalysis
    converter: PositionConverter

    def offset(self, position: types.Position) -> int:
        """The code-point offset of an LSP position in this version."""
        return self.converter.offset(position)

    def span(self, lsp_range: types.Range) -> Span:
        """The span of an LSP range in this version."""
        return self.converter.span(lsp_range)


#: A request handler that needs the document: (server, params, snapshot) -> answer.
_Handler = Callable[[MarginServer, Any, Snapshot], Awaitable[_Result]]
#: What pygls calls: (server, params) -> answer.
_Request = Callable[[MarginServer, Any], Awaitable[_Result]]


def _on_snapshot(empty: Callable[[], object]) -> Callable[[_Handler[_Result]], _Request[_Result]]:
    """The preamble of every request about one document (``params.text_document.uri``), once.

    The decorated handler is called with the :class:`Snapshot` of the current
    version (waiting for its analysis if needed); when the document is not
    open, the request is answered with ``empty()`` and the handler not called.
    """

    def decorate(handler: _Handler[_Result]) -> _Request[_Result]:
        @functools.wraps(handler)
        async def answer(ls: MarginServer, params: Any) -> _Result:
            snapshot = await _snapshot(ls, params.text_document.uri)
            if snapshot is None:
                return cast(_Result, empty())  # "nothing", in the form this request answers it
            return await handler(ls, params, snapshot)

        return answer

    return decorate


def _none() -> None:
    return None


def register(server: MarginServer) -> None:
    """Register every feature on ``server``."""
    measure_features.register(server)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MarginServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.state.desynchronised.discard(item.uri)
        ls.state.documents[item.uri] = Document(item.uri, item.version, item.text)
        ls.state.schedule(item.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MarginServer, params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        document = ls.state.documents.get(uri)
        try:
            if document is not None:
                ls.state.documents[uri] = apply_changes(document, version, params.content_changes, ls.encoding)
            elif uri in ls.state.desynchronised and (
                again := whole_text_again(uri, version, params.content_changes, ls.encoding)
            ):
                ls.state.desynchronised.discard(uri)  # the whole text came again: checked as after reopening
                ls.state.documents[uri] = again
            else:
                return
        except InvalidEdit as error:
            ls.desynchronised(uri, str(error))
            return
        if ls.state.config.check_frequency == "edit":
            ls.state.schedule(uri)
            for other in ls.state.importers_of(uri):  # those that read it through imports: analysed again
                ls.state.invalidate(other)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MarginServer, params: types.DidSaveTextDocumentParams) -> None:
        if ls.state.config.check_frequency in ("edit", "save"):
            ls.state.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MarginServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.state.close(params.text_document.uri)
        ls.published.forget(params.text_document.uri)
        if not ls.pull:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
            )

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="margin", inter_file_dependencies=True, workspace_diagnostics=True),
    )
    @_on_snapshot(lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
    async def document_diagnostic(
        ls: MarginServer, params: types.DocumentDiagnosticParams, snapshot: Snapshot
    ) -> types.DocumentDiagnosticReport:
        document, analysis, _converter = snapshot
        generation = ls.state.settings_generation  # new settings, new result: the same text may have other items
        result_id = f"{document.uri}@{document.version}" + (f"/{generation}" if generation else "")
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        coverage = await _coverage(ls, snapshot) if ls.state.config.coverage_diagnostics else None
        return types.RelatedFullDocumentDiagnosticReport(
            items=ls.diagnostics_for(document, analysis, coverage), result_id=result_id
        )

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(
        ls: MarginServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        return types.WorkspaceDiagnosticReport(items=await check_workspace(ls, params.work_done_token))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_on_snapshot(_none)
    async def hover(ls: MarginServer, params: types.HoverParams, snapshot: Snapshot) -> types.Hover | None:
        # Off the event loop: the first derivation of a formula imports SymPy (~0.2 s); coverage walks the graph.
        offset = snapshot.offset(params.position)
        tested = functools.partial(ls.state.queries.tested, snapshot.document.uri, snapshot.analysis)
        text = await asyncio.get_running_loop().run_in_executor(None, _hover_text, snapshot.analysis, offset, tested)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text)) if text else None

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    @_on_snapshot(list)
    async def inlay_hint(ls: MarginServer, params: types.InlayHintParams, snapshot: Snapshot) -> list[types.InlayHint]:
        # Off the event loop: the first request about a version indexes its values and checks (lookup.py).
        wanted = snapshot.span(params.range)
        return await asyncio.get_running_loop().run_in_executor(None, _inlay_hints, snapshot, wanted)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]),
    )
    @_on_snapshot(list)
    async def code_action(
        ls: MarginServer, params: types.CodeActionParams, snapshot: Snapshot
    ) -> list[types.CodeAction]:
        document, analysis, converter = snapshot
        span = snapshot.span(params.range)
        result = []
        for action in code_actions(analysis, span.start, span.end):
            edits = [types.TextEdit(converter.range(s), text) for s, text in action.edits]
            kind = types.CodeActionKind.QuickFix if action.kind == "quickfix" else types.CodeActionKind.Refactor
            fixed = [d for d in params.context.diagnostics if d.code == action.fixes] if action.fixes else None
            edit = types.WorkspaceEdit(changes={document.uri: edits})
            result.append(
                types.CodeAction(
                    action.title, kind=kind, diagnostics=fixed, is_preferred=action.preferred or None, edit=edit
                )
            )
        return result

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
    @_on_snapshot(list)
    async def completion(ls: MarginServer, params: types.CompletionParams, snapshot: Snapshot) -> types.CompletionList:
        # Off the event loop: the first request about a version indexes its names (completion.py).
        offset = snapshot.offset(params.position)
        found = await asyncio.get_running_loop().run_in_executor(None, completions, snapshot.analysis, offset, LIMIT)
        items = [
            types.CompletionItem(
                c.label, kind=_COMPLETION_KIND[c.kind], detail=c.detail, documentation=c.documentation or None
            )
            for c in found[:LIMIT]
        ]
        return types.CompletionList(is_incomplete=len(found) > LIMIT, items=items)  # more: asked again as typed

    @server.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP, types.SignatureHelpOptions(trigger_characters=["(", ","]))
    @_on_snapshot(_none)
    async def signature_help(
        ls: MarginServer, params: types.SignatureHelpParams, snapshot: Snapshot
    ) -> types.SignatureHelp | None:
        found = signature_at(snapshot.analysis, snapshot.offset(params.position))
        if found is None:
            return None
        parameters = [types.ParameterInformation(label=p) for p in found.parameters]
        info = types.SignatureInformation(found.label, documentation=found.documentation, parameters=parameters)
        return types.SignatureHelp(
            [info], active_signature=0, active_parameter=min(found.active, max(len(parameters) - 1, 0))
        )

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @_on_snapshot(_none)
    async def definition(ls: MarginServer, params: types.DefinitionParams, snapshot: Snapshot) -> types.Location | None:
        binding = binding_at(snapshot.analysis, snapshot.offset(params.position))
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
        return types.WorkspaceEdit(
            changes={uri: [types.TextEdit(r, params.new_name) for r in ranges] for uri, ranges in found.items()}
        )

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @_on_snapshot(list)
    async def document_symbol(
        ls: MarginServer, params: types.DocumentSymbolParams, snapshot: Snapshot
    ) -> list[types.DocumentSymbol]:
        _document, analysis, converter = snapshot

        def convert(symbol: Symbol) -> types.DocumentSymbol:
            kind = types.SymbolKind.Namespace if symbol.kind == "problem" else types.SymbolKind.Variable
            return types.DocumentSymbol(symbol.name, kind, converter.range(symbol.span), converter.range(symbol.selection),
                                        detail=symbol.detail, children=[convert(c) for c in symbol.children])  # fmt: skip

        return [convert(s) for s in document_symbols(analysis)]

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    @_on_snapshot(list)
    async def code_lens(ls: MarginServer, params: types.CodeLensParams, snapshot: Snapshot) -> list[types.CodeLens]:
        # Off the event loop: the coverage, and the lenses of a draft with many headings (~800: 11-19 ms).
        coverage = ls.state.queries.coverage if ls.state.config.coverage_lenses else None
        lenses = await asyncio.get_running_loop().run_in_executor(None, _problem_and_heading_lenses, snapshot, coverage)
        return lenses + measure_features.lenses(ls, snapshot.document, snapshot.analysis, snapshot.converter)


def _problem_and_heading_lenses(
    snapshot: Snapshot, coverage: Callable[[str, DocumentAnalysis], FileCoverage] | None
) -> list[types.CodeLens]:
    """Each problem's verdict and, with ``coverage`` (the lenses' setting is on), each heading's coverage."""
    document, analysis, converter = snapshot
    marks = {"pass": "✓", "fail": "✗", "untested": "○"}
    found = [
        (p.title_span, f"{marks[p.status]} {p.status}: {p.passed}/{p.total} checks pass") for p in analysis.problems
    ]
    if coverage is not None:
        found += heading_lenses(coverage(document.uri, analysis))
    found.sort(key=lambda lens: lens[0].start)
    return [types.CodeLens(converter.range(span), types.Command(title, "")) for span, title in found]


def _inlay_hints(snapshot: Snapshot, wanted: Span) -> list[types.InlayHint]:
    """The values and passing claims that end in ``wanted``, as inlay hints."""
    analysis, converter = snapshot.analysis, snapshot.converter
    hints = []
    for value in values_index(analysis).ending_between(wanted.start, wanted.end):
        label = f" {value.display}" if value.inline else f"  = {value.display}"
        hints.append(types.InlayHint(converter.position(value.span.end), label, types.InlayHintKind.Type))
    for check in checks_index(analysis).ending_between(wanted.start, wanted.end):
        if check.kind == "claim" and check.status == "pass":
            hints.append(types.InlayHint(converter.position(check.span.end), " ✓", tooltip=check.message))
    return hints


def _hover_text(analysis: DocumentAnalysis, offset: int, tested: Callable[[int], Concept | None]) -> str | None:
    with collector_paused():
        return hover_at(analysis, offset, tested)


async def _coverage(ls: MarginServer, snapshot: Snapshot) -> FileCoverage:
    """The coverage of a snapshot's analysis: cached per analysis, computed off the event loop."""
    uri, analysis = snapshot.document.uri, snapshot.analysis
    return await asyncio.get_running_loop().run_in_executor(None, ls.state.queries.coverage, uri, analysis)


async def _snapshot(ls: MarginServer, uri: str) -> Snapshot | None:
    """The current version of ``uri``, its analysis and its position converter; None when not open."""
    current = await ls.state.analysis(uri)
    if current is None:
        return None
    document, analysis = current
    return Snapshot(document, analysis, document.converter(ls.encoding))


async def _location(ls: MarginServer, path: str, span: Span) -> types.Location:
    """Where ``span`` of ``path`` is: in its open version if open, else as on disk."""
    uri = path_to_uri(path)
    current = await ls.state.analysis(uri) if uri in ls.state.documents else None
    if current is not None:
        return types.Location(uri, current[0].converter(ls.encoding).range(span))
    return types.Location(uri, PositionConverter(LineIndex(read_text(Path(path))), ls.encoding).range(span))


async def _occurrences(
    ls: MarginServer, uri: str, position: types.Position, include_definition: bool
) -> dict[str, list[types.Range]]:
    """Every range naming the definition at ``position``, in this and other open documents."""
    snapshot = await _snapshot(ls, uri)
    if snapshot is None:
        return {}
    target = binding_at(snapshot.analysis, snapshot.offset(position))
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
