"""Benchmarks: scripts that print figures (``bench_engine.py``, ``bench_server.py``) and the drafts they generate."""

from __future__ import annotations

import os


def keep_bytecode() -> str:
    """Let the processes a benchmark starts write and reuse ``__pycache__``, as an author's install does.

    A regular install (pip, pipx) compiles every module at install time; an
    editable one compiles on first import, unless ``PYTHONDONTWRITEBYTECODE``
    is set, when every start compiles every module again (measured on a
    2-core machine: ``margin check`` start-up 0.44 s instead of 0.21 s).
    Timings of a start should not include that, so the variable is dropped
    here (the first, warm-up start writes the caches); returns a line saying so.
    """
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        return "(PYTHONDONTWRITEBYTECODE dropped for the processes started: they reuse compiled bytecode)"
    return "(the processes started reuse compiled bytecode)"
