"""The VS Code client type-checks (strict) and bundles against the real vscode-languageclient.

The default run never reaches the network: npm installs the client's packages
from its own cache only (``--offline``), and the test is skipped when they are
not there.  ``MARGIN_NETWORK_TESTS=1`` lets npm download them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

NPM = shutil.which("npm")
NETWORK = os.environ.get("MARGIN_NETWORK_TESTS") == "1"


@pytest.mark.skipif(NPM is None, reason="needs node and npm")
def test_vscode_client_typechecks_and_bundles(tmp_path: Path) -> None:
    project = tmp_path / "vscode"
    shutil.copytree(ROOT / "editors" / "vscode", project, ignore=shutil.ignore_patterns("node_modules", "dist"))

    def run(*command: str) -> None:
        result = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr

    offline = [] if NETWORK else ["--offline"]  # --offline: from npm's cache, no request at all
    install = subprocess.run([NPM, "install", "--no-audit", "--no-fund", "--loglevel=error", *offline],  # type: ignore[list-item]
                             cwd=project, capture_output=True, text=True, timeout=300)  # fmt: skip
    if install.returncode and not NETWORK and "ENOTCACHED" in install.stderr:
        pytest.skip("the client's npm packages are not in npm's cache: set MARGIN_NETWORK_TESTS=1 to download them")
    if install.returncode and any(e in install.stderr for e in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT")):
        pytest.skip("the npm registry is unreachable")
    assert install.returncode == 0, install.stderr
    run(str(project / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", ".")
    run(NPM, "run", "build")  # type: ignore[arg-type]
    assert (project / "dist" / "extension.js").stat().st_size > 10_000
