"""The process entry point (``margin`` and ``python -m server``).

Start-up of ``margin lsp`` is dominated by defining classes: ``lsprotocol``
alone defines about a thousand attrs classes (~0.25 s).  Those are long-lived
objects, so the cyclic garbage collector's passes during import are wasted
work (measured: ~40 ms of the language server's start).  The collector is
paused while the command's modules load, the survivors are frozen out of its
way, and it is switched back on before any user input is read.  The code
attrs and cattrs generate for those classes comes from :mod:`server.code_cache`.
"""

from __future__ import annotations

import gc
import sys


def main(argv: list[str] | None = None) -> int:
    """Import the command's modules with the collector paused, then run it."""
    args = sys.argv[1:] if argv is None else argv
    gc.disable()
    try:
        from server import cli

        if args[:1] == ["lsp"]:
            from server import code_cache

            code_cache.install()
            import server.lsp.app  # noqa: F401 - loaded here so its classes are frozen with the rest
    finally:
        gc.freeze()
        gc.enable()
    return cli.main(argv)
