"""Start-up: ``initialize`` is answered with the protocol loaded and nothing else; the engine, the
state and the client's root and settings come right after (docs/editors.md, "How it stays fast").

Driven over raw stdio (:class:`tests.lsp.test_faults.RawServer`), against the real entry point; a
``sitecustomize`` module on ``PYTHONPATH`` records which modules are loaded when the server first
writes to the editor.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import scaling_core
from server.lsp import features
from server.lsp.server import VERSION
from tests.conftest import ROOT
from tests.lsp.conftest import WORKSPACE
from tests.lsp.test_faults import RawServer

#: Records, at the server's first write to the editor, which of the engine's modules are loaded.  It
#: patches pygls's writer when the server imports it, so that the server loads its modules in its own order.
RECORD_FIRST_ANSWER = """
import importlib.abc, importlib.util, json, sys


def record(io):
    original = io.StdoutWriter.write

    def write(self, data):
        if not getattr(write, "done", False):
            write.done = True
            engine = ("scaling_core", "markdown_it", "sympy", "numpy", "server.cli", "server.lsp.state")
            loaded = {m if m in engine else m.split(".")[0] for m in sys.modules if m in engine or m.split(".")[0] in engine}
            sys.stderr.write("FIRST-ANSWER " + json.dumps({"data": data.decode(), "loaded": sorted(loaded)}) + "\\n")
            sys.stderr.flush()
        original(self, data)

    io.StdoutWriter.write = write


class WhenImported(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "pygls.io_":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module
        spec.loader.exec_module = lambda module: (run(module), record(module))
        return spec


sys.meta_path.insert(0, WhenImported())
"""


def _server_with(tmp_path: Path, sitecustomize: str) -> RawServer:
    (tmp_path / "sitecustomize.py").write_text(sitecustomize, "utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    return RawServer({"PYTHONPATH": path, "TMPDIR": str(tmp_path)})


def test_initialize_is_answered_before_the_engine_loads_and_the_engine_follows(tmp_path: Path) -> None:
    server = _server_with(tmp_path, RECORD_FIRST_ANSWER)
    try:
        root = WORKSPACE.as_uri()
        options = {"margin": {"severity": {"N008": "off"}}}
        answer = server.call("initialize", {"processId": None, "rootUri": root, "capabilities": {}, "initializationOptions": options})  # fmt: skip
        assert answer["result"]["serverInfo"] == {"name": "margin", "version": scaling_core.__version__}
        server.notify("initialized", {})
        uri = server.open("startup.md", "# Start\n\nIt is `2 * 3 = 7`.\n")
        diagnostics = server.diagnostics(uri, 1)  # the engine loaded after the answer, and checks
        assert any(d["severity"] == 1 and "7" in d["message"] for d in diagnostics), diagnostics
        (line,) = [line for line in server.stderr().splitlines() if line.startswith("FIRST-ANSWER ")]
        first = json.loads(line.removeprefix("FIRST-ANSWER "))
        assert '"id": 1' in first["data"] or '"id":1' in first["data"]  # the first write is that answer
        assert first["loaded"] == [], f"loaded before initialize was answered: {first['loaded']}"
    finally:
        server.stop()


def test_an_engine_that_cannot_load_is_an_internal_error(tmp_path: Path) -> None:
    # A broken install, found once initialize is answered: one line on stderr, exit 2, as for any command.
    server = _server_with(tmp_path, "import sys\nsys.modules['server.lsp.state'] = None\n")
    try:
        assert "result" in server.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert server.exit_code() == 2
        (line,) = server.stderr().splitlines()
        assert line.startswith("margin: internal error (a bug in Margin") and "server.lsp.state" in line, line
        saved = Path(line.split("traceback saved to ")[1].split(";")[0])
        assert saved.parent == tmp_path and "Traceback" in saved.read_text("utf-8")
    finally:
        server.stop()


def test_the_server_reports_the_engines_version() -> None:
    assert VERSION == scaling_core.__version__


def _imported_names(statements: list[ast.stmt]) -> set[str]:
    return {alias.asname or alias.name for s in statements if isinstance(s, ast.ImportFrom) for alias in s.names}


def test_the_handlers_engine_names_are_bound_once_the_engine_loads() -> None:
    # features.py lists its engine-side imports twice: for type checkers, and in load_engine() for run time.
    tree = ast.parse((ROOT / "server" / "lsp" / "features.py").read_text("utf-8"))
    typing_only = next(
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    loader = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "load_engine")
    names = _imported_names(typing_only.body)
    assert names and names == _imported_names(loader.body)
    features.load_engine()
    assert {name for name in names if name not in vars(features)} == set()


def test_margin_lsp_options_are_read_without_the_rest_of_the_command_line() -> None:
    from server.cli import build_parser

    assert "lsp" in build_parser().format_help()  # still listed by `margin --help`
    done = subprocess.run([sys.executable, "-m", "server", "lsp", "--tcp", "x"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "margin lsp: error: argument --tcp" in done.stderr, done.stderr
