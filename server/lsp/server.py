"""The language server object: pygls's ``LanguageServer`` holding Margin's :class:`State`.

Diagnostics are pushed (``publishDiagnostics``, with the version) unless the
client supports pull diagnostics, which are then answered with
``uri@version`` result ids.  Errors are logged, never shown per keystroke.
Which handlers it answers with is :func:`server.lsp.app.create_server`'s
business; this module holds the object they share.
"""

from __future__ import annotations

import logging
import threading

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

import scaling_core
from scaling_core import DocumentAnalysis
from server import code_cache
from server.lsp.convert import diagnostic
from server.lsp.documents import Document
from server.lsp.loop_monitor import LoopMonitor
from server.lsp.state import State, settings_to_config

log = logging.getLogger(__name__)
#: The custom request that returns benchmark figures (docs/editors.md, "How it stays fast").
SERVER_STATS = "margin/serverStats"


class MarginProtocol(LanguageServerProtocol):
    """pygls's protocol, minus its own handling of ``didChange``.

    pygls 2.1 splits document lines at U+2028 (``str.splitlines``) and clamps
    out-of-range positions by assigning to the client's own ``Position``
    objects, so the change our handler receives is already corrupted.  We keep
    our own document model (:mod:`server.lsp.documents`), so the change is
    passed through untouched.
    """

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):  # type: ignore[no-untyped-def]
        """Hand the change, untouched, to Margin's own document model."""
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None


class MarginServer(LanguageServer):
    """pygls server plus Margin's state."""

    def __init__(self) -> None:
        super().__init__(
            "margin", scaling_core.__version__, protocol_cls=MarginProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )  # fmt: skip
        self.state = State(self.push)
        self.pull = False
        self.settings: object = None
        self.code_cache_saved = False
        self.loop_monitor = LoopMonitor()

    @property
    def encoding(self) -> str:
        """The negotiated position encoding."""
        return str(self.workspace.position_encoding or "utf-16")

    def push(self, document: Document, analysis: DocumentAnalysis) -> None:
        """Publish diagnostics for one analysed version (push clients only)."""
        if self.pull:
            if self.client_supports_refresh():
                self.workspace_diagnostic_refresh(None)
            self.save_code_cache_once()
            return
        converter = document.converter(self.encoding)
        items = [diagnostic(converter, document.uri, d) for d in analysis.diagnostics]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=document.uri, version=document.version, diagnostics=items)
        )
        if self.client_supports_inlay_refresh():
            self.workspace_inlay_hint_refresh(None)
        self.save_code_cache_once()

    def save_code_cache_once(self) -> None:
        """After the first analysis, keep start-up's generated code for the next start (off the loop)."""
        if not self.code_cache_saved:
            self.code_cache_saved = True
            threading.Thread(target=code_cache.save, name="margin-code-cache", daemon=True).start()

    def client_supports_refresh(self) -> bool:
        """Whether the client accepts ``workspace/diagnostic/refresh``."""
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)

    def client_supports_inlay_refresh(self) -> bool:
        """Whether the client accepts ``workspace/inlayHint/refresh``."""
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support)

    def report_server_error(self, error: Exception, source: object) -> None:
        """Log errors; never pop a message up per keystroke."""
        log.error("server error in %s", source, exc_info=error)
        self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"margin: {error!r}"))

    def apply_settings(self, settings: object) -> None:
        """Editor settings over the project's configuration."""
        self.settings = settings
        problems = self.state.set_root(self.state.root)
        config, more = settings_to_config(self.state.config, settings)
        self.state.config = config
        for problem in problems + more:
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"margin settings: {problem}"))
