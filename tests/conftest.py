"""Shared fixtures and helpers."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.document.session import CalcSession, Evaluation

ROOT = Path(__file__).resolve().parent.parent

# Servers the tests start keep their generated-code cache here, not in the user's home.
os.environ.setdefault("MARGIN_CACHE_DIR", tempfile.mkdtemp(prefix="margin-test-cache-"))


def compiled(module: ModuleType) -> bool:
    """Whether ``module`` was loaded compiled (a ``MARGIN_COMPILE=1`` build, docs/cli.md "A compiled engine")."""
    return not (module.__file__ or "").endswith(".py")


def margin(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command line (``python -m server ARGS``) in ``cwd``, with a minimal environment."""
    return subprocess.run(
        [sys.executable, "-m", "server", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
        timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/**/*.expected")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: builds environments from PyPI (deselect with -m 'not slow')")
    config.addinivalue_line(
        "markers", "publishing: real book builds (Sphinx, Pandoc, mystmd, Jupyter Book); .ci/run runs them as a step"
    )
    config.addinivalue_line("markers", "ray: measurements on a local Ray cluster (margin[ray]); a step of .ci/run")


def analyze(text: str, **config: object) -> DocumentAnalysis:
    """Analyse a draft with optional settings."""
    return analyze_document(text, "draft.md", Config(**config))  # type: ignore[arg-type]


def run(text: str) -> Evaluation:
    """Evaluate calc statements (one per line) in a fresh session."""
    return CalcSession().run(text)


def codes(analysis: DocumentAnalysis | Evaluation) -> list[str]:
    """The diagnostic codes reported, in order."""
    return [d.code for d in analysis.diagnostics]


def statuses(analysis: DocumentAnalysis | Evaluation) -> list[str]:
    """The status of every check, in order."""
    return [c.status for c in analysis.checks]


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Make a file or folder unreadable: by its mode when not root; as root (who may read anything), by
    making the listing or opening of that path fail with EACCES, as the kernel would for anyone else."""
    changed: list[tuple[Path, int]] = []
    denied: set[str] = set()
    if os.geteuid() == 0:
        real_scandir, real_open = os.scandir, open

        def scandir(path: str) -> object:
            if os.path.realpath(path) in denied:
                raise PermissionError(13, "Permission denied", path)
            return real_scandir(path)

        def guarded_open(path: object, *args: object, **kwargs: object) -> object:
            if isinstance(path, (str, Path)) and os.path.realpath(path) in denied:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr("server.discovery.os.scandir", scandir)
        monkeypatch.setattr("server.files.open", guarded_open, raising=False)

    def make(path: Path) -> None:
        if os.geteuid() == 0:
            denied.add(os.path.realpath(path))
        else:
            changed.append((path, path.stat().st_mode))
            path.chmod(0)

    yield make
    for path, mode in changed:
        path.chmod(mode)
