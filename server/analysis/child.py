"""The analysis process: ``python -m server.analysis.child`` runs a draft's Python and answers about it.

It speaks JSON lines: one request per line on stdin, replies on stdout,
everything else (the author's ``print``, JAX's warnings, logs) on stderr.
File descriptor 1 is pointed at stderr at start-up, so nothing the author's
code or a C library writes can corrupt the protocol.  It exits when stdin
closes.  It imports JAX only when a question needs it
(``server/analysis/costs.py``), never at start-up.

Requests (``id`` is echoed; the last reply of each request has ``"final": true``):

``{"op": "load", "id": 1, "program": DIGEST, "cells": [CODE, ...]}``
    Runs the cells in order in one fresh namespace.  Replies
    ``{"kind": "cell", "index": i, "outcome": "ok" | "error" | "not-run", "message": ..., "line": n}``
    after each cell, then ``{"kind": "loaded", "functions": [...], "final": true}``.
``{"op": "ask", "id": 2, "kind": "xla_cost" | "comm_bytes", "program": DIGEST, "function": NAME, "args": [[DTYPE, [DIMS]], ...], "target": "v5e:2x2"}``
    (``target``, optional: a TPU topology ``xla_cost`` also compiles for, ``server/analysis/tpu_aot.py``.)  Replies ``{"kind": "answer", "values": {...}, "unknown": {...}, "failure": null | [OUTCOME, MESSAGE], "final": true}``.
``{"op": "shutdown"}``
    Exits.

On start it says ``{"kind": "ready", "protocol": 1, "python": ..., "jax": VERSION | null, "pid": ...}``.
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import json
import os
import sys
import traceback
from collections import OrderedDict
from typing import Any, TextIO

PROTOCOL = 1
#: The ``__name__`` of the module the cells run in (functions they define carry it).
MODULE = "margin_cells"
#: Programs kept loaded (the latest versions of the drafts being edited).
KEEP_PROGRAMS = 8


def cell_filename(index: int) -> str:
    """The file name a cell's code is compiled under (tracebacks name it)."""
    return f"<python calc block {index + 1}>"


class Child:
    """The state of the analysis process: loaded programs by digest."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.programs: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def send(self, message: dict[str, Any]) -> None:
        """Write one protocol line."""
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def handle(self, request: dict[str, Any]) -> bool:
        """Answer one request; False when the process should exit."""
        op, ident = request.get("op"), request.get("id")
        if op == "shutdown":
            return False
        if op == "load":
            self.load(ident, str(request.get("program", "")), [str(c) for c in request.get("cells", [])])
        elif op == "ask":
            self.send({"id": ident, "kind": "answer", "final": True, **self.ask(request)})
        else:
            self.send({"id": ident, "kind": "error", "final": True, "message": f"unknown op {op!r}"})
        return True

    # -- cells -------------------------------------------------------------------
    def load(self, ident: object, digest: str, cells: list[str]) -> None:
        """Run the cells of a program in one namespace, reporting after each."""
        namespace: dict[str, Any] = {"__name__": MODULE, "__builtins__": __builtins__}
        for index, source in enumerate(cells):
            report = run_cell(source, index, namespace)
            self.send({"id": ident, "kind": "cell", "index": index, **report})
        self.programs[digest] = namespace
        self.programs.move_to_end(digest)
        while len(self.programs) > KEEP_PROGRAMS:
            self.programs.popitem(last=False)
        self.send({"id": ident, "kind": "loaded", "final": True, "functions": sorted(functions_of(namespace))})

    # -- questions -----------------------------------------------------------------
    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer an ``ask`` request: values and unknown fields, or a failure."""
        namespace = self.programs.get(str(request.get("program", "")))
        name = str(request.get("function", ""))
        if namespace is None:
            return {"failure": ["not-run", "the analysis process has not loaded this program"]}
        function = namespace.get(name)
        if function is None or not callable(function):
            return {"failure": ["not-run", f"{name} is not a function of the python calc blocks"]}
        args = [(str(dtype), [int(d) for d in dims]) for dtype, dims in request.get("args", [])]
        try:
            from server.analysis import costs  # JAX is imported here, on the first question only
        except ImportError as error:
            return {"failure": ["not-run", missing_module(error)]}
        try:
            values, unknown = costs.answer(str(request.get("kind")), function, args, str(request.get("target") or ""))
        except costs.Unsupported as error:
            return {"failure": ["not-run", str(error)]}
        except ImportError as error:
            return {"failure": ["not-run", missing_module(error)]}
        except Exception as error:  # the author's function raised while JAX traced it
            return {"failure": ["error", describe(error, error.__traceback__)]}
        return {"values": values, "unknown": unknown}


def run_cell(source: str, index: int, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run one cell in ``namespace``: its outcome, message and line (within the cell)."""
    filename = cell_filename(index)
    try:
        code = compile(source, filename, "exec")
        exec(code, namespace)  # noqa: S102 -- the draft's own code, in a trusted workspace, in this separate process
    except ImportError as error:
        if isinstance(error, ModuleNotFoundError):
            return {"outcome": "not-run", "message": missing_module(error), "line": _line_in(error, filename)}
        return {"outcome": "error", "message": describe(error, error.__traceback__), "line": _line_in(error, filename)}
    except SyntaxError as error:
        line = error.lineno or 0 if error.filename == filename else 0
        return {"outcome": "error", "message": f"SyntaxError: {error.msg}", "line": line}
    except BaseException as error:  # SystemExit, KeyboardInterrupt from the author's code included
        return {"outcome": "error", "message": describe(error, error.__traceback__), "line": _line_in(error, filename)}
    return {"outcome": "ok", "message": "", "line": 0}


def _line_in(error: BaseException, filename: str) -> int:
    """The line of the last traceback frame in ``filename`` (0 if none)."""
    lines = [frame.lineno or 0 for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
    return lines[-1] if lines else 0


def describe(error: BaseException, tb: Any) -> str:
    """``Type: message``, and where in the author's code the last frame was (``in f, block 1 line 3``)."""
    text = f"{type(error).__name__}: {error}".strip().rstrip(":")
    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith("<python calc block ")]
    if frames:
        last = frames[-1]
        block = last.filename.removeprefix("<python calc block ").rstrip(">")
        where = f"block {block} line {last.lineno}" + (f", in {last.name}" if last.name != "<module>" else "")
        text += f" ({where})"
    return text.splitlines()[0] if "\n" in text else text


def missing_module(error: ImportError) -> str:
    """Why a module could not be imported, and how to install it."""
    name = getattr(error, "name", None) or str(error)
    hint = " (pip install 'margin[jax]')" if name.split(".")[0] in ("jax", "jaxlib") else ""
    return f"module '{name}' is not installed for {sys.executable}{hint}"


def functions_of(namespace: dict[str, Any]) -> list[str]:
    """Top-level callables the cells defined: their functions, lambdas, ``jax.jit`` wrappers, partials."""
    found = []
    for name, value in namespace.items():
        if name.startswith("__") or inspect.isclass(value) or inspect.ismodule(value) or not callable(value):
            continue
        target = value.func if isinstance(value, functools.partial) else value
        target = inspect.unwrap(target) if hasattr(target, "__wrapped__") else target
        if getattr(target, "__module__", None) == MODULE:
            found.append(name)
    return found


def main() -> None:
    """Serve requests until stdin closes."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the author's print() and C libraries now write to stderr
    sys.stdout = sys.stderr
    child = Child(protocol)
    try:
        jax_version: str | None = importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        jax_version = None
    python = sys.version.split()[0]
    child.send({"kind": "ready", "protocol": PROTOCOL, "python": python, "jax": jax_version, "pid": os.getpid()})
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            child.send({"kind": "error", "final": True, "message": "a request that is not JSON"})
            continue
        if not isinstance(request, dict) or not child.handle(request):
            break


if __name__ == "__main__":
    main()
