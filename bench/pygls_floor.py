"""The floor of the language server's start-up: a bare pygls server answering ``initialize``.

Loaded as Margin's server loads the protocol (the collector paused, the
generated-code cache of ``server/code_cache.py``), with one handler and no
Margin code behind it: ``bench/bench_server.py`` starts it to say how far
above pygls + lsprotocol's own start-up Margin's is.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

gc.disable()
from server import code_cache  # noqa: E402

code_cache.install()
from lsprotocol import types  # noqa: E402
from pygls.lsp.server import LanguageServer  # noqa: E402

server = LanguageServer("floor", "1")


@server.feature(types.SHUTDOWN)
def shutdown(ls: LanguageServer, params: None) -> None:
    """Keep the generated code for the next start, as Margin's server does."""
    code_cache.save()


gc.freeze()
gc.enable()
gc.set_threshold(100_000, 50, 50)
server.start_io()
