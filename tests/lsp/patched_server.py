"""The real language server (``margin lsp`` over stdio) with faults that only a test needs, injected
from outside the product: the server itself carries no hook for them.

Run as ``python tests/lsp/patched_server.py``; the environment says what to break:

* ``MARGIN_TEST_UNREADABLE``: paths (separated by ``os.pathsep``) that cannot be listed or opened,
  failing with ``EACCES`` as the kernel does for anyone but root.  Tests running as a user make a
  path unreadable by its mode instead (the ``unreadable`` fixture of ``tests/conftest.py``); as
  root, who may read anything, the server needs this.
* ``MARGIN_TEST_BROKEN_CALL``: a function a draft can call (``sqrt``) that raises, as a bug in
  Margin would: each statement that calls it gets an E999 and the rest of the draft is checked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _deny(paths: set[str]) -> None:
    """Listing or opening any of ``paths`` fails with ``PermissionError`` (as in ``tests/conftest.py``)."""
    import builtins

    import server.files

    real_scandir, real_open = os.scandir, builtins.open

    def scandir(path: object = ".") -> object:
        if os.path.realpath(str(path)) in paths:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[call-overload]

    def guarded_open(path: object, *args: object, **kwargs: object) -> object:
        if isinstance(path, (str, Path)) and os.path.realpath(path) in paths:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    os.scandir = scandir  # type: ignore[assignment]
    server.files.open = guarded_open  # type: ignore[attr-defined]


def _break(name: str) -> None:
    """Calls of ``name`` in a draft raise ``RuntimeError`` (a bug in a built-in, as far as the engine knows)."""
    from scaling_core.prelude import CALLABLES

    def broken(evaluator: object, node: object) -> None:
        raise RuntimeError(f"{name} broken by MARGIN_TEST_BROKEN_CALL")

    CALLABLES[name] = broken  # type: ignore[assignment]


def main() -> int:
    """Inject the faults the environment names, then run ``margin lsp``."""
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path[0] = str(ROOT)  # import the project's packages, never this folder's test modules
    denied = os.environ.get("MARGIN_TEST_UNREADABLE")
    if denied:
        _deny({os.path.realpath(p) for p in denied.split(os.pathsep) if p})
    broken = os.environ.get("MARGIN_TEST_BROKEN_CALL")
    if broken:
        _break(broken)
    from server.launch import main as launch

    return launch(["lsp"])


if __name__ == "__main__":
    raise SystemExit(main())
