"""``margin check --watch``: check, then check again after every saved change.

File events come from ``watchfiles`` (the operating system's notifications,
debounced and grouped); nothing is polled by hand.  A change to a Markdown
draft or to a configuration file (``margin.toml``, ``pyproject.toml``,
``.gitignore``) starts a new run.  Usage errors in a later run (a config
made invalid while watching) are printed and the watch goes on; Ctrl-C ends
it with the last run's exit code.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from server.workspace import UsageError

_WATCHED_NAMES = {"margin.toml", "pyproject.toml", ".gitignore"}


def _relevant(change: object, path: str) -> bool:
    name = Path(path).name
    return name.endswith((".md", ".markdown")) or name in _WATCHED_NAMES


def _roots(args: argparse.Namespace) -> list[Path]:
    roots = set()
    for argument in args.paths:
        path = Path(argument)
        if not path.exists():  # a glob: watch the folder it starts in
            fixed = [part for part in path.parts if not any(c in part for c in "*?[")]
            path = Path(*fixed) if fixed else Path(".")
            path = path if path.is_dir() else path.parent
        roots.add((path if path.is_dir() else path.parent).resolve())
    if args.config is not None:
        roots.add(Path(args.config).resolve().parent)
    return sorted(roots)


def watch(
    args: argparse.Namespace, check_once: Callable[[argparse.Namespace], int], stop: threading.Event | None = None
) -> int:
    """Run ``check_once`` now and after each relevant change until interrupted (or ``stop`` is set)."""
    from watchfiles import watch as file_changes  # loaded only for --watch

    last = [0]  # the exit code of the last completed run, kept even if Ctrl-C lands while printing

    def run() -> None:
        try:
            last[0] = check_once(args)
        except UsageError as error:
            print(f"margin: {error}", file=sys.stderr)
            last[0] = 2
        sys.stdout.flush()
        if not args.quiet:
            print(f"[{time.strftime('%H:%M:%S')}] watching for changes (Ctrl-C to stop)", file=sys.stderr, flush=True)

    # The watcher is running once its first (empty) timeout comes back: only then check,
    # so that a save made while the first run is printed is never missed.
    changes_seen = file_changes(
        *_roots(args), watch_filter=_relevant, stop_event=stop, raise_interrupt=False, yield_on_timeout=True,
        rust_timeout=100,
    )  # fmt: skip
    try:
        next(changes_seen)
        run()
        for changes in changes_seen:
            if not changes:
                continue
            names = sorted({display for _, display in changes})
            if not args.quiet:
                shown = ", ".join(Path(n).name for n in names[:3]) + (" …" if len(names) > 3 else "")
                print(f"[{time.strftime('%H:%M:%S')}] changed: {shown}; checking again", file=sys.stderr, flush=True)
            run()
    except KeyboardInterrupt:
        pass
    return last[0]
