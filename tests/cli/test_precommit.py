"""The pre-commit hook as a user gets it: real ``pre-commit``, this repository as a fresh clone, PyPI.

The hook repository is a snapshot of the working tree (tracked and untracked
files that git does not ignore, committed in a temporary repository), so the
test covers what the next commit will publish.  ``pre-commit`` installs it with
pip into its own virtualenv: that needs PyPI (the module is skipped when PyPI
cannot be reached) and takes a while, so the module is marked ``slow``.

``try-repo`` builds its environment in a temporary store every time, so it runs
once; the other cases use ``pre-commit run`` with a config pointing at the same
snapshot and a ``PRE_COMMIT_HOME`` shared by the module, which builds the
environment once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.fresh_install import copy_working_tree, index_problem
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

GIT_SETTINGS = ("user.name=margin-tests", "user.email=margin-tests@example.invalid", "commit.gpgsign=false")
GIT = ["git", *(word for setting in GIT_SETTINGS for word in ("-c", setting))]
#: What pip prints when it cannot get a package (in pre-commit's error report).
INSTALL_FAILED = (
    "Could not find a version that satisfies", "No matching distribution found", "NewConnectionError",
    "Temporary failure in name resolution", "Network is unreachable", "ConnectTimeout", "ReadTimeoutError",
)  # fmt: skip


def _pre_commit_executable() -> Path:
    for candidate in (Path(sys.executable).with_name("pre-commit"), ROOT / ".venv" / "bin" / "pre-commit"):
        if candidate.is_file():
            return candidate
    pytest.skip("pre-commit is not installed (pip install -e '.[test]')")


def _environment(home: Path) -> dict[str, str]:
    # A test run from inside a git hook inherits GIT_DIR, GIT_INDEX_FILE...: they would point pre-commit elsewhere.
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    # Without an index, pip's retries would take minutes before pre-commit reports the failure.
    env.update(PIP_RETRIES="0", PIP_TIMEOUT="15", PIP_DEFAULT_TIMEOUT="15")
    return env


def _git(*args: str, cwd: Path) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    return subprocess.run([*GIT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def pypi() -> None:
    """Skip the module when git is missing or the package index cannot be reached."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if problem := index_problem():
        pytest.skip(f"{problem}; pre-commit installs the hook from it")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, pypi: None) -> tuple[Path, str]:
    """A committed snapshot of the working tree, as a fresh clone would have it; (path, commit)."""
    snapshot = copy_working_tree(tmp_path_factory.mktemp("hook-repo"))
    _git("init", "-q", cwd=snapshot)
    _git("add", "-A", cwd=snapshot)
    _git("commit", "-q", "-m", "snapshot of the working tree", cwd=snapshot)
    return snapshot, _git("rev-parse", "HEAD", cwd=snapshot).strip()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PRE_COMMIT_HOME for the module: the hook's environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, hook_repo: tuple[Path, str]) -> Path:
    """A user's repository: a correct draft (with its import), a wrong one, an excluded copy of it."""
    root = tmp_path_factory.mktemp("project")
    for name in ("examples/rooflines.md", "examples/constants.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, root / name)
    (root / "drafts").mkdir()
    shutil.copy2(ROOT / "examples/mistakes/wrong-claims.md", root / "wrong.md")
    shutil.copy2(ROOT / "examples/mistakes/wrong-claims.md", root / "drafts/wrong.md")
    (root / "margin.toml").write_text('exclude = ["drafts/**"]\n', "utf-8")
    repo, rev = hook_repo
    config = f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: margin\n"
    (root / ".pre-commit-config.yaml").write_text(config, "utf-8")
    _git("init", "-q", cwd=root)
    _git("add", "-A", cwd=root)
    return root


def pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Run pre-commit; skip when it could not install the hook because the index became unreachable."""
    result = subprocess.run(
        [str(_pre_commit_executable()), *args], cwd=cwd, env=_environment(home), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    output = result.stdout + result.stderr
    log = home / "pre-commit.log"
    if result.returncode == 3:  # pre-commit's "unexpected error", e.g. pip could not install the hook
        details = output + (log.read_text("utf-8", errors="replace") if log.is_file() else "")
        if any(marker in details for marker in INSTALL_FAILED):
            index_problem.cache_clear()
            if problem := index_problem():
                pytest.skip(problem)
        pytest.fail(f"pre-commit failed to run the hook:\n{details}")
    return result


def test_try_repo_from_a_fresh_clone(project: Path, hook_repo: tuple[Path, str], home: Path) -> None:
    repo, _ = hook_repo
    files = ["wrong.md", "examples/rooflines.md", "drafts/wrong.md"]
    result = pre_commit("try-repo", str(repo), "margin", "--color", "never", "--files", *files, cwd=project, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "margin check" in result.stdout and "Failed" in result.stdout
    assert "wrong.md:13:22: error C001: check failed: computed 22.49 days, not ≈ 12 days" in result.stdout
    assert "drafts/wrong.md" not in result.stdout  # --force-exclude: the config's exclude applies
    assert "2 files: checks" in result.stdout


def test_correct_draft_passes(project: Path, home: Path) -> None:
    result = pre_commit("run", "margin", "--color", "never", "--files", "examples/rooflines.md", cwd=project, home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


def test_wrong_draft_fails_with_its_diagnostics(project: Path, home: Path) -> None:
    result = pre_commit("run", "margin", "--color", "never", "--files", "wrong.md", cwd=project, home=home)
    assert result.returncode == 1
    assert "wrong.md:15:36: error C001" in result.stdout and "off by a factor of 1000" in result.stdout


def test_excluded_file_named_explicitly_is_skipped(project: Path, home: Path) -> None:
    result = pre_commit("run", "margin", "--color", "never", "--files", "drafts/wrong.md", cwd=project, home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout


def test_all_files_applies_the_exclude_in_one_run(project: Path, home: Path) -> None:
    result = pre_commit("run", "margin", "--color", "never", "--all-files", cwd=project, home=home)
    assert result.returncode == 1
    assert "wrong.md:13:22: error C001" in result.stdout and "drafts/wrong.md" not in result.stdout
    assert result.stdout.count("files: checks") == 1 and "3 files: checks" in result.stdout  # require_serial
