"""The VS Code extension inside a real VS Code: code-server 1.100.3 in headless Chromium.

The Margin extension (editors/vscode, bundled and packaged as a .vsix) and a
test-only probe extension (vscode_probe/) are installed into a fresh
code-server.  The probe opens a draft, waits for Margin's diagnostics, asks
VS Code's own hover, inlay-hint and code-action providers (answered through
the extension's language client), applies the quick fix and POSTs what it saw
to this test.  Needs the tools that ``tests/editors/vscode_e2e_setup.sh``
installs (``.ci/run`` runs it); skipped, with the reason, without them.

With ``MARGIN_SCREENSHOTS`` set, ``test_screenshot_vscode`` also drives
Chromium over the DevTools protocol (``screenshots.py``) and saves the
README's pictures while the probe sets the scene for each.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.editors.screenshots import SCREENSHOT_DRAFT, SHOTS, Chromium

E2E = Path(os.environ.get("MARGIN_E2E_DIR", ROOT / ".e2e"))
CODE_SERVER = E2E / "code-server" / "node_modules" / ".bin" / "code-server"
VSCE = E2E / "vsce" / "node_modules" / ".bin" / "vsce"
NPM = shutil.which("npm")
CHROMIUM = shutil.which("chromium")
MISSING = [str(p) for p in (CODE_SERVER, VSCE) if not p.exists()] + [
    n for n, p in (("npm", NPM), ("chromium", CHROMIUM)) if not p
]

DRAFT = """# Draft 🚀

```calc
t = 2 * 8 * 128 * 8192 byte / (9e10 byte/s) -> us
peak = h100.flops_bf16
```

The copy takes 300 µs<!-- ≈ t -->.

**Question 1 [copy]:** How long does the copy take?

```calc
t == 186.4 us ± 1%
```
"""

pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"run tests/editors/vscode_e2e_setup.sh first (missing: {MISSING})"
)


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def package(source: Path, work: Path, name: str, build: bool) -> Path:
    """Copy an extension, bundle it if asked, and package it as a .vsix."""
    folder = work / name
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("node_modules", "dist", "package-lock.json"))
    if build:
        # --offline: from npm's cache (vscode_e2e_setup.sh fills it), no request during the test run
        offline = [] if os.environ.get("MARGIN_NETWORK_TESTS") == "1" else ["--offline"]
        run([NPM, "install", "--no-audit", "--no-fund", "--loglevel=error", *offline], folder)  # type: ignore[list-item]
        run([NPM, "run", "build"], folder)  # type: ignore[list-item]
    vsix = work / f"{name}.vsix"
    run(
        [str(VSCE), "package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "-o", str(vsix)],
        folder,
    )
    return vsix


class Reports(http.server.BaseHTTPRequestHandler):
    """Receives the probe's POSTs: screenshot requests (``/shot``), then its one report."""

    received: dict[str, object] = {}
    arrived = threading.Event()
    shoot: Callable[[str], None] | None = None  # set by the screenshot test

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/shot":
            try:
                assert Reports.shoot is not None
                Reports.shoot(body["name"])
                self.send_response(204)
            except Exception as error:  # noqa: BLE001 - reported to the probe, which reports it back
                self.send_response(500)
                self.send_header("Content-Length", str(len(repr(error).encode())))
                self.end_headers()
                self.wfile.write(repr(error).encode())
                return
            self.end_headers()
            return
        Reports.received = body
        self.send_response(204)
        self.end_headers()
        Reports.arrived.set()

    def log_message(self, *args: object) -> None:
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(url: str, process: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        assert process.poll() is None, "code-server exited"
        try:
            urllib.request.urlopen(url, timeout=1)  # noqa: S310 - localhost
            return
        except OSError:
            threading.Event().wait(0.05)
    raise AssertionError("code-server did not start listening")


@contextlib.contextmanager
def vs_code(tmp_path: Path, draft: str, settings: dict[str, object], probe_env: dict[str, str]) -> Iterator[str]:
    """Package and install both extensions, start code-server on a workspace holding draft.md, yield its URL.

    The probe reports to this module's ``Reports`` (``Reports.received`` once ``Reports.arrived``).
    """
    Reports.received, Reports.arrived = {}, threading.Event()
    margin_vsix = package(ROOT / "editors" / "vscode", tmp_path, "margin", build=True)
    probe_vsix = package(Path(__file__).parent / "vscode_probe", tmp_path, "probe", build=False)
    workspace, extensions, data = tmp_path / "workspace", tmp_path / "extensions", tmp_path / "data"
    (data / "User").mkdir(parents=True)
    workspace.mkdir()
    path = workspace / "draft.md"
    path.write_text(draft, encoding="utf-8")
    server = str(Path(sys.executable).parent / "margin")
    settings = {"margin.command": [server, "lsp"], "security.workspace.trust.enabled": False, "workbench.startupEditor": "none",
                **settings}  # fmt: skip
    (data / "User" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    reports = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Reports)
    threading.Thread(target=reports.serve_forever, daemon=True).start()
    report_url = f"http://127.0.0.1:{reports.server_port}"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           "MARGIN_PROBE_DOC": str(path), "MARGIN_PROBE_REPORT": f"{report_url}/",
           **{key: value.replace("{reports}", report_url) for key, value in probe_env.items()}}  # fmt: skip
    common = [str(CODE_SERVER), "--user-data-dir", str(data), "--extensions-dir", str(extensions)]
    for vsix in (margin_vsix, probe_vsix):
        run([*common, "--install-extension", str(vsix)], tmp_path, env)
    port = free_port()
    log = (tmp_path / "code-server.log").open("wb")
    editor = subprocess.Popen([*common, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
                               "--disable-update-check", "--disable-workspace-trust", str(workspace)],
                              env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        wait_until_listening(f"http://127.0.0.1:{port}/healthz", editor)
        yield f"http://127.0.0.1:{port}/?folder={workspace}"
    finally:
        editor.kill()
        editor.wait()
        reports.shutdown()


def await_report(tmp_path: Path) -> dict[str, object]:
    """The probe's report (an assertion error with code-server's log if it never comes)."""
    assert Reports.arrived.wait(180), (
        "the probe never reported: " + (tmp_path / "code-server.log").read_text(errors="replace")[-3000:]
    )
    return Reports.received


def test_the_extension_works_inside_vs_code(tmp_path: Path) -> None:
    with vs_code(tmp_path, DRAFT, {}, {}) as url:
        browser = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",  # type: ignore[list-item]
             "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'chromium'}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            report = await_report(tmp_path)
        finally:
            browser.kill()
            browser.wait()
    assert "error" not in report, report.get("error")
    assert str(report["vscodeVersion"]).startswith("1.")
    # The claim "300 µs" on line 8 (index 7), columns 15-21 in UTF-16 (the 🚀 is on another line).
    assert report["diagnostics"] == [
        {
            "code": "C001",
            "message": "check failed: computed 186.4 µs, not ≈ 300 µs (tolerance -50 µs/+100 µs)",
            "range": [7, 15, 7, 21],
        }
    ]
    assert "**186 us** (186.4 us)" in str(report["hover"])  # the inlay's value, then 4 digits, in the unit after ->
    assert {"line": 3, "label": "  = 186 us"} in report["inlayHints"]  # type: ignore[operator]
    assert "flops_bf16" in report["fieldCompletions"] and "hbm_bw" in report["fieldCompletions"]  # type: ignore[operator]
    assert "t" in report["symbols"] and any("Question 1" in s for s in report["symbols"])  # type: ignore[union-attr]
    # Coverage lenses are on by default: the heading's (t and its heading tested; peak and the
    # h100.flops_bf16 it reads not), then the problem's verdict.
    assert report["codeLenses"] == [
        {"line": 0, "title": "1 problem · 1 check · 50% of concepts tested"},
        {"line": 9, "title": "✓ pass: 1/1 checks pass"},
    ]
    assert report["quickFix"] == "Replace 300 µs with 186 µs"
    after = report["afterFix"]
    assert after["diagnostics"] == []  # type: ignore[index]
    assert after["text"] == DRAFT.replace("300 µs", "186 µs")  # type: ignore[index]


# --- the README's pictures: MARGIN_SCREENSHOTS=docs/images pytest tests/editors -k screenshot ----------------------

LOOK = {  # a plain, uncluttered VS Code: the light theme, no minimap, nothing but the draft and its problems
    "workbench.colorTheme": "Default Light Modern",
    "editor.fontSize": 16,
    "editor.minimap.enabled": False,
    "editor.stickyScroll.enabled": False,
    "editor.cursorBlinking": "solid",
    "editor.hover.above": False,  # the derivation opens below its line, leaving the calc block in view
    "breadcrumbs.enabled": False,
    "workbench.tips.enabled": False,
    "workbench.layoutControl.enabled": False,
    "chat.commandCenter.enabled": False,
    "extensions.ignoreRecommendations": True,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
}
# What the page must show before each picture (the probe asks for them in this order).
SHOWS = {
    "vscode-diagnostics": (
        "document.querySelectorAll('.squiggly-error').length >= 2"
        " && document.querySelector('.view-lines').innerText.replace(/\\s/g, ' ').includes('= 22.5 days')"
        " && document.querySelector('.markers-panel').innerText.includes('computed 22.49 days')"
    ),
    "vscode-hover": (
        "[...document.querySelectorAll('.monaco-hover')].some(h => h.offsetParent && h.innerText.includes('Defined as'))"
    ),
    "vscode-quickfix": (
        "[...document.querySelectorAll('.action-widget')].some(w => w.offsetParent && w.innerText.includes('Replace 12 days'))"
    ),
}


@pytest.mark.skipif(SHOTS is None, reason="screenshots only when asked: set MARGIN_SCREENSHOTS to a folder")
def test_screenshot_vscode(tmp_path: Path) -> None:
    """docs/images/vscode-*.png: the squiggle, inlay values and problems; the hover's derivation; the quick fix."""
    assert SHOTS is not None
    taken: list[str] = []
    with vs_code(tmp_path, SCREENSHOT_DRAFT, LOOK, {"MARGIN_PROBE_SHOTS": "{reports}/shot"}) as url:
        browser = Chromium(CHROMIUM, url, tmp_path / "chromium", 1024, 768)  # type: ignore[arg-type]

        def shoot(name: str) -> None:
            try:
                browser.wait_for(SHOWS[name], 30)
            except TimeoutError:
                browser.screenshot(tmp_path / f"{name}-timed-out.png")  # what the page showed instead
                raise
            threading.Event().wait(0.7)  # let animations (the hover's fade-in) finish
            browser.screenshot(SHOTS / f"{name}.png")  # type: ignore[operator]
            taken.append(name)

        Reports.shoot = shoot
        try:
            browser.attach()
            report = await_report(tmp_path)
        finally:
            Reports.shoot = None
            browser.close()
    assert "error" not in report, report.get("error")
    assert taken == list(SHOWS)
