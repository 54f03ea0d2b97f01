"""``margin lsp``: its options and how it runs, light to import (the standard library only).

The command line lists it (:mod:`server.cli`), and the entry point
(:mod:`server.launch`) runs ``margin lsp ...`` through :func:`main` without
loading the rest of the command line: a language server answers ``initialize``
before it loads the engine (docs/editors.md, "How it stays fast").
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from server.crash import report_internal_error


def add_lsp_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``lsp`` subcommand to ``commands`` (the command line's subparsers)."""
    _add_options(commands.add_parser("lsp", parents=[common], help="run the language server (stdio by default)"))


def _add_options(lsp: argparse.ArgumentParser) -> None:
    lsp.add_argument("--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT instead of stdio")


#: How long the analysis thread keeps the interpreter lock from the event loop (see ``run_lsp``).
LOCK_SWITCH_INTERVAL_S = 0.001


def run_lsp(args: argparse.Namespace) -> int:
    """``margin lsp``: pygls is imported only here, so ``check`` stays light."""
    import gc
    import logging

    from server.lsp.app import create_server

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # never stdout: that is the protocol
    server = create_server()
    server.debug = bool(getattr(args, "debug", False))  # the command line leaves it unset unless given
    # A long-lived process: move what start-up made out of the collector's way (the
    # launcher already collects young objects rarely).  No collection first: it would
    # cost 30-90 ms of start-up to free ~17k import-time objects, and freeing them would
    # not return their memory to the system anyway.
    gc.freeze()
    # Analyses run in a worker thread and hold the interpreter lock while the event loop waits for it: a thread
    # that wants the lock gets it after at most this long (Python's default: 5 ms).  Measured with bench_server
    # on 10,000 book-like lines, three interleaved pairs of 2,000+ edits: the longest event-loop turn 19.5-66.7
    # ms with 5 ms, 21.6-23.0 ms with 1 ms, and edit -> diagnostics p50 the same within the noise.
    sys.setswitchinterval(LOCK_SWITCH_INTERVAL_S)
    if args.tcp:
        server.start_tcp("127.0.0.1", args.tcp)
    else:
        server.start_io()
    return server.exit_code  # 1 after `exit` without `shutdown`


def main(argv: list[str]) -> int:
    """Run ``margin lsp ...`` (``argv`` starts with ``lsp``) with the command line's exit codes.

    2 for bad options and for internal errors (one line on stderr, as every
    command: :mod:`server.crash`), 130 when interrupted.
    """
    for stream in (sys.stdout, sys.stderr):  # as server.cli: a file name that is not UTF-8 is logged escaped
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(prog="margin lsp")
    parser.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    _add_options(parser)
    try:
        args = parser.parse_args(argv[1:])
    except SystemExit as stop:
        return int(stop.code or 0) and 2
    try:
        return run_lsp(args)
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # noqa: BLE001 - every other exception is a bug in Margin
        return report_internal_error(error, debug=args.debug)
