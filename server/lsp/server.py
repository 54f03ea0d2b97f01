"""The language server object: pygls's ``LanguageServer`` holding Margin's :class:`State`.

Diagnostics are pushed (``publishDiagnostics``, with the version) unless the
client supports pull diagnostics, which are then answered with
``uri@version`` result ids.  Errors are logged, never shown per keystroke.
Which handlers it answers with is :func:`server.lsp.app.create_server`'s
business; this module holds the object they share.

Answering ``initialize`` needs only the protocol (pygls, lsprotocol), so this
module imports no engine: the engine and the state load right after that
answer, before any other message is handled (:meth:`MarginServer.load_engine`;
docs/editors.md, "How it stays fast").
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from server import code_cache
from server.collector import collector_paused
from server.lsp.loop_monitor import LoopMonitor
from server.lsp.published import DiagnosticsJson
from server.lsp.traffic import EditorTraffic
from server.lsp.transport import serve, threaded_reader

if TYPE_CHECKING:
    from scaling_core import DocumentAnalysis
    from scaling_core.queries.coverage_model import FileCoverage
    from server.lsp.convert import PositionConverter
    from server.lsp.documents import Document
    from server.lsp.state import State

log = logging.getLogger(__name__)
#: The custom request that returns benchmark figures (docs/editors.md, "How it stays fast").
SERVER_STATS = "margin/serverStats"
#: The version in ``serverInfo``: ``scaling_core.__version__``, written here so that answering
#: ``initialize`` does not load the engine (tests/lsp/test_startup.py checks that they agree).
VERSION = "0.1.0"


class MarginProtocol(LanguageServerProtocol):
    """pygls's protocol, minus its own handling of ``didChange``, plus answers pygls leaves out.

    pygls 2.1 splits document lines at U+2028 (``str.splitlines``) and clamps
    out-of-range positions by assigning to the client's own ``Position``
    objects, so the change our handler receives is already corrupted.  We keep
    our own document model (:mod:`server.lsp.documents`), so the change is
    passed through untouched.

    Messages come from :mod:`server.lsp.transport`; a request after
    ``shutdown`` is answered ``InvalidRequest`` (pygls drops it), and error
    answers carry no ``data``: pygls puts the Python traceback there, which
    belongs in the log only.
    """

    _server: MarginServer

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):  # type: ignore[no-untyped-def]
        """Hand the change, untouched, to Margin's own document model."""
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):  # type: ignore[no-untyped-def]
        """Hand the opened text to Margin's own document model only.

        pygls's own handler also keeps the text in its workspace, where no
        change ever reaches it (see :meth:`lsp_text_document__did_change`): a
        stale second copy of every open draft until it is closed (a 20 MB
        draft: 40 MB).
        """
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any):  # type: ignore[no-untyped-def]
        """pygls's shutdown: our handler, then every other pending handler cancelled, walking a copy of
        their futures (a future done meanwhile is forgotten by its callback, see :meth:`_execute_handler`,
        which would change the dict being walked; pygls issue 606)."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        answering = self.msg_id  # this request's own future is not cancelled
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != answering and not future.done():
                future.cancel()
        self._shutdown = True

    def handle_message(self, message: Any) -> None:
        """pygls's dispatch, except that a request after ``shutdown`` gets ``InvalidRequest``.

        The engine loads right after ``initialize`` is answered (its answer is written by
        then), or before any other message a client sends first.
        """
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and getattr(message, "id", None) is not None:
            self.reject_request(message.id, types.ErrorCodes.InvalidRequest, "the server is shut down")
            return
        if method != types.INITIALIZE:
            self._server.load_engine()
        super().handle_message(message)
        if method == types.INITIALIZE:
            self._server.load_engine()  # while the editor reads the answer

    def _execute_handler(  # type: ignore[no-untyped-def]
        self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None
    ):
        """pygls's, except that a notification's future is forgotten once its handler is done.

        pygls 2.1 files the future of every handler that is not a plain function
        (our ``didChange`` is a generator) under a made-up id, and only an answer
        removes it: a notification has none, so every keystroke's future stayed
        (measured: ~1.3 KB a keystroke, 20 MB after 8,000 keystrokes).
        """
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if callback == self._check_handler_result:  # how pygls runs a notification's handler
            future = self._request_futures.get(msg_id)
            if future is not None:
                future.add_done_callback(lambda _done: self._request_futures.pop(msg_id, None))

    def reject_request(self, msg_id: object, code: int, message: str) -> None:
        """Answer request ``msg_id`` with an error."""
        self._send_response(msg_id, error=types.ResponseError(code=code, message=message))

    def invalid_notification(self, method: str, params: object, reason: str) -> None:
        """A notification whose params could not be read: a lost ``didChange`` desynchronises its document."""
        if method == types.TEXT_DOCUMENT_DID_CHANGE and isinstance(params, dict):
            document = params.get("textDocument")
            uri = document.get("uri") if isinstance(document, dict) else None
            if isinstance(uri, str):
                self._server.desynchronised(uri, reason)

    def invalid_response(self, msg_id: object, reason: str) -> None:
        """A response of the client's that could not be read fails the request waiting on it (never hangs)."""
        error = types.ResponseError(code=types.ErrorCodes.InvalidParams, message=f"unreadable response: {reason}")
        self._handle_response(msg_id, None, error)  # type: ignore[arg-type]

    def framed(self, body: str) -> bytes:
        """A message's JSON ``body`` (ASCII, as ``json.dumps`` writes it) with its header, for :meth:`write_encoded`."""
        header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        return (header + body).encode(self.CHARSET)

    def write_encoded(self, data: bytes) -> None:
        """Write what :meth:`framed` made (on the event loop, where every message is written)."""
        if self.writer is None:
            log.error("unable to send data: no transport")
            return
        written = self.writer.write(data)
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)

    def _send_response(self, msg_id: Any, result: Any = None, error: types.ResponseError | None = None) -> None:
        if error is not None and error.data is not None:
            log.error("error answering request %s: %s %s", msg_id, error.message, error.data)
            error = types.ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)


class MarginServer(LanguageServer):
    """pygls server plus Margin's state (created with the engine: :meth:`load_engine`)."""

    def __init__(self, load_engine: Callable[[MarginServer], None]) -> None:
        super().__init__(
            "margin", VERSION, protocol_cls=MarginProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )  # fmt: skip
        self.state: State  # set by ``load_engine``
        self.protocol: MarginProtocol  # what ``protocol_cls`` made
        #: Each open document's last published diagnostics as JSON (``published.py``).
        self.published = DiagnosticsJson(self.protocol._converter.unstructure)
        self._load_engine: Callable[[MarginServer], None] | None = load_engine
        #: The client's ``initialize`` params: its root and settings apply once the engine is loaded.
        self.initialize_params: types.InitializeParams | None = None
        #: ``margin lsp --debug``: an internal error prints its traceback instead of saving it.
        self.debug = False
        self.pull = False
        self.settings: object = None
        self.code_cache_saved = False
        self.loop_monitor = LoopMonitor()
        #: The editor's messages read and not yet dispatched, which the preparation in pauses gives way to.
        self.traffic = EditorTraffic()
        #: The process's exit code: 1 after ``exit`` without ``shutdown`` (LSP 3.17).
        self.exit_code = 0
        #: The documents whose internal errors (E999) the user was told about: once each per session.
        self._told_internal: set[str] = set()
        #: The settings problems last shown to the user (shown again only when they change).
        self._told_settings = ""
        #: Whether the editor trusts the workspace folder (``workspaceTrusted``; only ever restricts trust).
        self.workspace_trusted = True

    @property
    def handler_futures(self) -> int:
        """Handlers' futures pygls holds (those of requests not answered yet): a figure for benchmarks and tests."""
        return len(self.protocol._request_futures)

    def load_engine(self) -> None:
        """Import the engine and create the state (the ``load_engine`` given at creation), once.

        Failing to is a broken install: an internal error (one line on stderr, exit 2),
        as when the command line cannot load.
        """
        load, self._load_engine = self._load_engine, None
        if load is None:
            return
        try:
            # Long-lived objects, frozen out of the collector's way; the engine's regular expressions from the cache.
            with collector_paused(), code_cache.loading_modules():
                load(self)
        except Exception as error:  # noqa: BLE001 - reported as an internal error
            from server.crash import report_internal_error

            raise SystemExit(report_internal_error(error, debug=self.debug)) from error

    # -- transport -----------------------------------------------------------------------------
    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdio with Margin's reader (:mod:`server.lsp.transport`), not pygls's."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        read = threaded_reader(stdin or sys.stdin.buffer, self.traffic)
        self._run(serve(self.protocol, read, self._stop_event))

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client at a time on ``host:port`` with Margin's reader."""
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)
            await serve(self.protocol, lambda: reader.read(65536), stop)
            self.shutdown()  # type: ignore[no-untyped-call]

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        self._run(listen())

    def _run(self, main: Any) -> None:
        try:
            asyncio.run(main)
        except BrokenPipeError:
            log.error("the connection to the editor is lost: stopping")
        except asyncio.CancelledError:
            pass
        except SystemExit as stop:  # the ``exit`` notification
            self.exit_code = stop.code if isinstance(stop.code, int) else 0
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    @property
    def encoding(self) -> str:
        """The negotiated position encoding."""
        return str(self.workspace.position_encoding or "utf-16")

    def push(self, document: Document, analysis: DocumentAnalysis, encoded: bytes | None = None) -> None:
        """Publish diagnostics for one analysed version (push clients only); tell the user about an
        internal error in it first (:meth:`tell_internal_error`), for pull clients too.

        ``encoded`` is the notification :meth:`prepare_diagnostics` made off the event loop.
        """
        self.tell_internal_error(document, analysis)
        if self.pull:
            if self.client_supports_refresh():
                self.workspace_diagnostic_refresh(None)
            self.save_code_cache_once()
            return
        encoded = encoded or self.prepare_diagnostics(document, analysis)
        if encoded is not None:
            self.protocol.write_encoded(encoded)
        if self.client_supports_inlay_refresh():
            self.workspace_inlay_hint_refresh(None)
        self.save_code_cache_once()

    def prepare_diagnostics(self, document: Document, analysis: DocumentAnalysis) -> bytes | None:
        """The ``publishDiagnostics`` notification :meth:`push` will write, made in the analysis thread (None
        for pull clients): its JSON for ~400 failing checks held the event loop up to ~70 ms the first time."""
        if self.pull:
            return None
        converter = document.converter(self.encoding)
        notes = self._coverage_notes(document, analysis, converter)
        body = self.published.notification(document.uri, document.version, converter, analysis.diagnostics, notes)
        return self.protocol.framed(body)

    def diagnostics_for(
        self, document: Document, analysis: DocumentAnalysis, coverage: FileCoverage | None = None
    ) -> list[types.Diagnostic]:
        """The LSP diagnostics of one analysed version: the analysis's, then, when the
        ``coverage_diagnostics`` setting is on, one information note per untested definition.

        ``coverage`` is the analysis's coverage when the caller has it; otherwise the
        state's cached one (computed once per analysis).
        """
        from server.lsp.convert import diagnostic

        converter = document.converter(self.encoding)
        items = [diagnostic(converter, document.uri, d) for d in analysis.diagnostics]
        return items + self._coverage_notes(document, analysis, converter, coverage)

    def _coverage_notes(self, document: Document, analysis: DocumentAnalysis, converter: PositionConverter,
                        coverage: FileCoverage | None = None) -> list[types.Diagnostic]:  # fmt: skip
        """With the ``coverage_diagnostics`` setting on, an information note per untested definition."""
        if not self.state.config.coverage_diagnostics:
            return []
        from scaling_core.queries.coverage_views import untested_definitions
        from server.lsp.convert import information

        if coverage is None:
            coverage = self.state.queries.coverage(document.uri, analysis)
        return [information(converter, span, message) for span, message in untested_definitions(coverage)]

    def save_code_cache_once(self) -> None:
        """After the first analysis, keep start-up's generated code for the next start (off the loop)."""
        if not self.code_cache_saved:
            self.code_cache_saved = True
            threading.Thread(target=code_cache.save, name="margin-code-cache", daemon=True).start()

    def client_supports_refresh(self) -> bool:
        """Whether the client accepts ``workspace/diagnostic/refresh``."""
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)

    def refresh_code_lenses(self) -> None:
        """Ask the client for code lenses again, when it can (the heading lenses follow the settings)."""
        workspace = self.client_capabilities.workspace
        if workspace and workspace.code_lens and workspace.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def client_supports_inlay_refresh(self) -> bool:
        """Whether the client accepts ``workspace/inlayHint/refresh``."""
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support)

    def analysis_failed(self, document: Document, error: BaseException) -> None:
        """An analysis raised (a bug): its E999 is published; the user is told once per document per session."""
        if document.uri in self._told_internal:
            return
        self._told_internal.add(document.uri)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, (
            f"Margin hit an internal error while checking {document.path}: {type(error).__name__}: {error}. "
            "Results shown for it may be incomplete; please report this (the server log has the details).")))  # fmt: skip

    def tell_internal_error(self, document: Document, analysis: DocumentAnalysis) -> None:
        """A version about to be published holds an internal error (E999: a bug in Margin at a statement,
        the rest checked): logged, and shown once per document per session, never per keystroke."""
        if document.uri in self._told_internal:
            return
        internal = [d for d in analysis.diagnostics if d.code == "E999"]
        if not internal:
            return
        self._told_internal.add(document.uri)
        line = analysis.index.position(internal[0].span.start)[0] + 1
        detail = internal[0].message.removeprefix("internal error: ").split("; ", 1)[0]
        more = f" (and {len(internal) - 1} more)" if len(internal) > 1 else ""
        log.error("internal error in %s at line %d%s: %s", document.path, line, more, internal[0].message)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, (
            f"Margin hit an internal error while checking {document.path} at line {line}{more}: {detail}. "
            "That part is not checked (error E999 there); please report this.")))  # fmt: skip

    def desynchronised(self, uri: str, reason: str) -> None:
        """An edit to ``uri`` could not be applied: stop answering about it until its whole text is sent."""
        if not self.state.desynchronise(uri):
            return
        log.error("edit to %s rejected: %s", uri, reason)
        if self.pull:
            if self.client_supports_refresh():
                self.workspace_diagnostic_refresh(None)
        else:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, (
            f"Margin could not apply an edit to {uri} ({reason}) and stopped checking it; "
            "close and reopen the file to check it again.")))  # fmt: skip

    def report_server_error(self, error: Exception, source: object) -> None:
        """Log errors; never pop a message up per keystroke."""
        log.error("server error in %s", source, exc_info=error)
        self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"margin: {error!r}"))

    def apply_settings(self, settings: object) -> None:
        """Editor settings over the project's configuration."""
        from server.lsp.settings import settings_to_config
        from server.lsp.trusted import workspace_trusted

        self.settings = settings
        problems = self.state.set_root(self.state.root)
        config, more = settings_to_config(self.state.config, settings)
        trusted = workspace_trusted(settings)
        if trusted is not None:  # kept until the editor says otherwise: a settings object may leave it out
            self.workspace_trusted = trusted
        if not self.workspace_trusted and config.trust:  # the editor does not trust the folder: no Python runs
            config = dataclasses.replace(config, trust=False)
        self.state.config = config
        for problem in problems + more:
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"margin settings: {problem}"))
        shown = "; ".join(problems + more)
        if shown and shown != self._told_settings:  # once per distinct set of problems, not per re-send
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, (
                f"Margin settings: {shown[:2000]}. The other settings apply; a chip field that is not "
                "usable is not known to drafts (T003 where it is used).")))  # fmt: skip
        self._told_settings = shown
