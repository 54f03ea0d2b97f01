"""A real install: build the wheel, install it into a fresh venv, run every command from outside the checkout.

Nothing may depend on running from the source tree.  The fresh venv gets the
wheel with ``--no-index --no-deps``; its dependencies come from the test
environment's site-packages through a path file (plain path lines only, so the
test environment's editable install of Margin is *not* visible there).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.cli.fresh_install import copy_working_tree, fresh_venv, run_installed, working_tree_files
from tests.conftest import ROOT

PACKAGES = ("margin", "scaling_core", "server")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the files a fresh clone has."""
    source = copy_working_tree(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), str(source)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    (built,) = out.glob("margin-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with only the wheel installed; returns its bin folder."""
    return fresh_venv(tmp_path_factory.mktemp("fresh-venv"), str(wheel))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working folder outside the checkout."""
    assert ROOT not in tmp_path.parents
    return tmp_path


def test_wheel_ships_every_packaged_file(wheel: Path) -> None:
    """Every tracked non-Python file inside a package (data, typing marker) is in the wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = [
        name for name in working_tree_files()
        if name.split("/")[0] in PACKAGES and not name.endswith(".py") and "__pycache__" not in name
    ]  # fmt: skip
    assert any(name.startswith("scaling_core/hardware/data/chips/") for name in wanted)
    missing = [name for name in wanted if name not in names]
    assert missing == []
    assert {f"{package}/__init__.py" for package in PACKAGES} <= names


def test_installed_modules_come_from_the_venv(installed: Path, outside: Path) -> None:
    shown = run_installed(
        installed, "python", "-c", "import margin, scaling_core, server; print(scaling_core.__file__)", cwd=outside
    )
    assert shown.returncode == 0, shown.stderr
    assert str(installed.parent) in shown.stdout and str(ROOT) not in shown.stdout


def test_check_examples_from_outside(installed: Path, outside: Path) -> None:
    result = run_installed(installed, "margin", "check", str(ROOT / "examples"), cwd=outside)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 failed" in result.stdout and "errors" in result.stdout
    wrong = run_installed(
        installed, "margin", "check", str(ROOT / "examples" / "mistakes" / "wrong-claims.md"), cwd=outside
    )
    assert wrong.returncode == 1 and "C001" in wrong.stdout


def test_hardware_and_eval_from_outside(installed: Path, outside: Path) -> None:
    hardware = run_installed(installed, "margin", "hardware", cwd=outside)
    assert hardware.returncode == 0, hardware.stderr
    for chip in ("tpu_v5p", "h100", "b200"):
        assert f"{chip}:" in hardware.stdout
    evaluated = run_installed(installed, "margin", "eval", "h100.hbm_bw * 1 s -> GB", cwd=outside)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "GB" in evaluated.stdout


def _message(stream, deadline: float) -> dict:
    """Read one LSP message (Content-Length framing), waiting at most until ``deadline``."""
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        ready, _, _ = select.select([stream], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise TimeoutError("no message from the server")
        byte = stream.read(1)
        if not byte:
            raise EOFError("the server closed its output")
        header += byte
    length = next(
        int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    body = b""
    while len(body) < length:  # an unbuffered pipe may return less than asked
        chunk = stream.read(length - len(body))
        if not chunk:
            raise EOFError("the server closed its output")
        body += chunk
    return json.loads(body)


def _send(stream, message: dict) -> None:
    body = json.dumps(message).encode()
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def test_language_server_from_outside(installed: Path, outside: Path) -> None:
    """``margin lsp`` over stdio: initialize, open a wrong draft, receive its diagnostic."""
    env = {"PATH": f"{installed}:/usr/bin:/bin", "HOME": str(outside), "MARGIN_CACHE_DIR": str(outside / "cache")}
    server = subprocess.Popen(
        [str(installed / "margin"), "lsp"], cwd=outside, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, bufsize=0,  # unbuffered: select() sees exactly what is unread
    )  # fmt: skip
    uri = (outside / "draft.md").as_uri()
    text = "```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\nIt takes about 170 ms<!-- ≈ t -->.\n"
    try:
        deadline = time.monotonic() + 60
        _send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": os.getpid(), "rootUri": outside.as_uri(), "capabilities": {}}})  # fmt: skip
        while (reply := _message(server.stdout, deadline)).get("id") != 1:
            pass
        assert "capabilities" in reply["result"]
        _send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        _send(server.stdin, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})  # fmt: skip
        while True:
            message = _message(server.stdout, deadline)
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                break
        (diagnostic,) = message["params"]["diagnostics"]
        assert diagnostic["code"] == "C001"
        assert diagnostic["range"]["start"] == {"line": 4, "character": 15}
        _send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        while _message(server.stdout, deadline).get("id") != 2:
            pass
        _send(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


CRASH = (
    "import sys, server.check_command as c\n"
    "def broken(*args, **kwargs):\n    raise RuntimeError('crafted failure')\n"
    "c.analyze_document = broken\n"
    "from server.launch import main\nsys.exit(main(sys.argv[1:]))\n"
)


def test_internal_error_exits_2_with_one_line(installed: Path, outside: Path) -> None:
    (outside / "draft.md").write_text("It takes `2 * 3 = 6`.\n", "utf-8")
    crashed = run_installed(installed, "python", "-c", CRASH, "check", "draft.md", cwd=outside)
    assert crashed.returncode == 2
    (line,) = crashed.stderr.splitlines()
    assert "internal error" in line and "bug in Margin" in line and "RuntimeError: crafted failure" in line
    saved = Path(line.split("traceback saved to ")[1].split(";")[0])
    assert "Traceback" in saved.read_text("utf-8") and "crafted failure" in saved.read_text("utf-8")
    saved.unlink()
    debug = run_installed(installed, "python", "-c", CRASH, "check", "--debug", "draft.md", cwd=outside)
    assert debug.returncode == 2
    assert debug.stderr.startswith("Traceback (most recent call last)")
    assert "check_command.py" in debug.stderr and "\nRuntimeError: crafted failure\n" in debug.stderr
