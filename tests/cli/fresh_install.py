"""Helpers for the tests of what a user installs: the working tree as a fresh clone has it, a fresh venv.

Used by test_packaging.py (a wheel of this tree), test_release.py (the release
files of scripts/build-release) and test_precommit.py (the hook repository).
"""

from __future__ import annotations

import functools
import os
import shutil
import ssl
import subprocess
import sys
import sysconfig
import urllib.error
import urllib.request
import venv
from pathlib import Path

from tests.conftest import ROOT

PYPI = "https://pypi.org/simple"


def working_tree_files() -> list[str]:
    """The files a fresh clone of the next commit has: tracked or untracked-but-not-ignored, and present."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [name for name in listed.stdout.split("\0") if name and (ROOT / name).is_file()]


def copy_working_tree(target: Path) -> Path:
    """Copy :func:`working_tree_files` into ``target`` (a tracked file deleted in the working tree is left out)."""
    for name in working_tree_files():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    return target


def fresh_venv(env_dir: Path, *pip_install: str) -> Path:
    """A new venv where ``pip install --no-index --no-deps PIP_INSTALL`` has run; returns its bin folder.

    Margin's dependencies come from the test environment's site-packages
    through a path file (plain path lines only, so the test environment's
    editable install of Margin is *not* visible there).
    """
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", *pip_install], check=True, timeout=300
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "margin_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n", "utf-8")
    return env_dir / "bin"


def run_installed(bin_dir: Path, *args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``args[0]`` from the venv's ``bin_dir`` in ``cwd``, with a minimal environment."""
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd), "MARGIN_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


def _pip_index() -> str:
    """The index pip installs from: PIP_INDEX_URL, pip's configuration, or PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"].split()[0]
    configured = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.index-url"], capture_output=True, text=True, timeout=60
    )
    return configured.stdout.strip() if configured.returncode == 0 and configured.stdout.strip() else PYPI


@functools.cache
def index_problem() -> str | None:
    """Why pip's package index cannot be reached (10 s at most), or None when it answers."""
    index = _pip_index()
    if not index.startswith(("http://", "https://")):
        return None
    try:
        context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
        with urllib.request.urlopen(f"{index.rstrip('/')}/pathspec/", timeout=10, context=context):
            return None
    except urllib.error.HTTPError:
        return None  # it answered
    except (OSError, ValueError) as error:  # URLError and timeouts are OSErrors
        return f"the package index {index} cannot be reached ({error})"
