"""The process entry point (``margin`` and ``python -m server``): load the command's modules, run it.

The modules load with the cyclic collector paused and are then frozen out of
its way (:mod:`server.collector`); the code that attrs, cattrs (the language
server's protocol) and dataclasses (every command's) generate comes from
:mod:`server.code_cache`, and so do the programs of the regular expressions
they compile.  ``margin lsp`` loads only the protocol and its own options
(:mod:`server.lsp.command`), not the rest of the command line: the engine
loads once ``initialize`` is answered (docs/editors.md, "How it stays fast").
An error while loading is an internal error (:mod:`server.crash`).
"""

from __future__ import annotations

import gc
import sys

from server.collector import collector_paused


def main(argv: list[str] | None = None) -> int:
    """Import the command's modules with the collector paused, then run it.

    An exception while importing (a broken install, a missing data file) is an
    internal error like any other: exit 2 with one line, never a traceback and 1.
    """
    args = sys.argv[1:] if argv is None else argv
    lsp = args[:1] == ["lsp"]
    try:
        with collector_paused():
            from server import code_cache

            code_cache.install(protocol=lsp)
            with code_cache.loading_modules():
                if lsp:
                    import server.lsp.app  # noqa: F401 - loaded here so its classes are frozen with the rest
                    from server.lsp import command
                else:
                    from server import cli
    except Exception as error:  # noqa: BLE001 - a bug or a broken install, reported as such
        from server.crash import report_internal_error

        return report_internal_error(error, debug="--debug" in args)
    # Analyses allocate many small objects and leave no cycles behind (refcounting frees
    # them), so young collections can be rare: 6% of `margin check`, and in the server no
    # collection lands on a keystroke.
    gc.set_threshold(100_000, 50, 50)
    if lsp:
        return command.main(args)  # the language server saves the code cache after its first analysis
    try:
        return cli.main(argv)
    finally:
        code_cache.save()  # only when this start compiled something the cache lacked (the first after an install)
