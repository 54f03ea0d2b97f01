"""The language server's life cycle: :func:`create_server` builds a :class:`MarginServer`
and registers the session handlers (initialize, settings, shutdown, server stats) here and
the document features from :mod:`server.lsp.features`.

Start-up answers ``initialize`` with the protocol loaded and nothing else; the
engine, the state and the client's root and settings come right after that
answer (:func:`load_engine`; docs/editors.md, "How it stays fast").
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from lsprotocol import types

from server import code_cache
from server.collector import share_heaps
from server.lsp import features, loop_monitor
from server.lsp.server import SERVER_STATS, MarginServer

log = logging.getLogger(__name__)


def watch_parent(pid: int | None, interval_s: float = 2.0) -> None:
    """Exit when the editor that started us has gone (it may not send shutdown)."""
    if not pid:
        return

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="margin-parent-watchdog", daemon=True).start()


def create_server() -> MarginServer:
    """A server with every feature registered."""
    server = MarginServer(load_engine)

    @server.feature(types.INITIALIZE)
    def initialize(ls: MarginServer, params: types.InitializeParams) -> None:
        ls.initialize_params = params  # its root and settings: applied by load_engine, right after the answer
        text_document = params.capabilities.text_document
        ls.pull = bool(text_document and text_document.diagnostic)
        watch_parent(params.process_id)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MarginServer, params: types.InitializedParams) -> None:
        share_heaps()  # before a draft is opened: its threads reuse what the others freed
        if loop_monitor.enabled():
            ls.loop_monitor.start()
        workspace = ls.client_capabilities.workspace
        if workspace and workspace.configuration:
            ls.state.pause()
            try:
                await _fetch_settings(ls)
            finally:
                ls.state.resume()

    @server.feature(SERVER_STATS)
    def server_stats(ls: MarginServer, params: object) -> dict[str, object]:
        """Figures for benchmarks: event-loop lag (when MARGIN_LOOP_MONITOR=1, else null), analyses stopped,
        replaced analyses freed off the loop, analyses whose hover indexes were built in a pause, handlers'
        futures held.  With ``{"resetLoop": true}`` the lag
        figures start over once read."""
        stats: dict[str, object] = {
            "loop": ls.loop_monitor.stats() if loop_monitor.enabled() else None,
            "analyses_cancelled": ls.state.cancelled,
            "analyses_released_in_background": ls.state.released_in_background,
            "queries_prepared": ls.state.queries.prepared,
            "handler_futures": ls.handler_futures,
        }
        reset = params.get("resetLoop") if isinstance(params, dict) else getattr(params, "resetLoop", None)
        if reset is True:
            ls.loop_monitor.reset()
        return stats

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MarginServer, params: None) -> None:
        code_cache.save()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MarginServer, params: types.DidChangeConfigurationParams) -> None:
        ls.state.pause()
        try:
            workspace = ls.client_capabilities.workspace
            if workspace and workspace.configuration:
                await _fetch_settings(ls)
            elif params.settings is not None:
                ls.apply_settings(params.settings)
        finally:
            ls.state.resume()
        ls.refresh_code_lenses()

    features.register(server)
    return server


def load_engine(ls: MarginServer) -> None:
    """The engine side of start-up: the handlers' engine names, the state, the client's root and settings."""
    from server.lsp.documents import uri_to_path
    from server.lsp.state import State

    features.load_engine()
    ls.state = State(ls.push, ls.analysis_failed, ls.prepare_diagnostics, ls.traffic.giving_way)
    params = ls.initialize_params
    if params is not None:
        root = params.root_uri or (params.workspace_folders[0].uri if params.workspace_folders else None)
        ls.state.set_root(Path(uri_to_path(root)) if root else None)
        ls.apply_settings(params.initialization_options)


async def _fetch_settings(ls: MarginServer) -> None:
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="margin")])
        )
    except Exception as error:  # noqa: BLE001 - a client without settings is fine
        log.info("workspace/configuration failed: %r", error)
        return
    if result and result[0] is not None:
        ls.apply_settings({"margin": result[0]})
