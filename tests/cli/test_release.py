"""The release files of ``scripts/build-release``, as pip on a user's machine chooses among them.

The script builds the sdist, a pure wheel and a compiled wheel for this
platform and Python (docs/cli.md, "Release wheels").  pip, given the folder as
its index, must take the compiled wheel here and the pure one on any other
platform; both must give the results the source tree gives.  The build needs
PyPI (its tools, setuptools, mypy) and compiles for about 4 minutes on 2 cores,
so the module is marked ``slow`` and skipped when the index cannot be reached.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.tags import sys_tags  # packaging comes with pytest
from packaging.utils import parse_wheel_filename

from tests.cli.fresh_install import copy_working_tree, fresh_venv, index_problem, run_installed
from tests.conftest import ROOT, margin

sys.path.insert(0, str(ROOT / "build_support"))

from margin_build import compiled_paths  # noqa: E402  (the build backend's helpers; build_support/ is its folder)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder scripts/build-release filled, from a copy of the files a fresh clone has."""
    if problem := index_problem():
        pytest.skip(f"{problem}; the release build installs its tools from it")
    source = copy_working_tree(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        ["bash", str(source / "scripts" / "build-release"), str(out)], capture_output=True, text=True, timeout=1500
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def _wheels(release: Path) -> dict[str, Path]:
    """The release's wheels by kind: "pure" (py3-none-any) and "compiled" (this interpreter's tag)."""
    wheels = {}
    for path in release.glob("*.whl"):
        _, _, _, tags = parse_wheel_filename(path.name)
        kind = "pure" if {str(tag) for tag in tags} == {"py3-none-any"} else "compiled"
        assert kind not in wheels, f"two {kind} wheels: {wheels.get(kind)} and {path}"
        wheels[kind] = path
    return wheels


def test_release_holds_sdist_pure_and_compiled_wheels(release: Path) -> None:
    assert len(list(release.glob("margin-*.tar.gz"))) == 1
    wheels = _wheels(release)
    assert set(wheels) == {"pure", "compiled"}
    _, _, _, tags = parse_wheel_filename(wheels["compiled"].name)
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert all(tag.interpreter == interpreter and tag.platform.startswith("manylinux") for tag in tags), tags
    assert set(tags) & set(sys_tags()), f"{wheels['compiled'].name} cannot be installed here"
    names = zipfile.ZipFile(wheels["compiled"]).namelist()
    for module in compiled_paths():  # every listed module ships compiled, beside its source
        stem = module.removesuffix(".py")
        assert any(name.startswith(f"{stem}.cpython-") and name.endswith(".so") for name in names), module
    pure_names = zipfile.ZipFile(wheels["pure"]).namelist()
    assert not [name for name in pure_names if name.endswith(".so")]


def test_pip_takes_the_compiled_wheel_here(release: Path, tmp_path: Path) -> None:
    """From the release folder as its only index, pip installs the compiled engine; it checks as the tree does."""
    installed = fresh_venv(tmp_path / "venv", "--find-links", str(release), "margin")
    version = run_installed(installed, "margin", "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip().endswith("(compiled engine)"), version
    checked = run_installed(installed, "margin", "check", str(ROOT / "examples"), cwd=tmp_path)
    from_tree = margin("check", str(ROOT / "examples"), cwd=tmp_path)
    assert checked.returncode == from_tree.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == from_tree.stdout.splitlines()[-1]  # the summary: same counts


def test_pip_takes_the_pure_wheel_elsewhere(release: Path, tmp_path: Path) -> None:
    """For a platform with no compiled wheel (macOS on ARM, another Python), pip takes the pure one, which works."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-index", "--no-deps", "--find-links", str(release),
         "--only-binary=:all:", "--platform", "macosx_11_0_arm64", "--python-version", "3.12", "--dest",
         str(tmp_path / "macos"), "margin"],
        check=True, timeout=120,
    )  # fmt: skip
    (chosen,) = (tmp_path / "macos").glob("*.whl")
    assert chosen.name == _wheels(release)["pure"].name
    installed = fresh_venv(tmp_path / "venv", str(chosen))
    version = run_installed(installed, "margin", "--version", cwd=tmp_path)
    assert version.returncode == 0 and "compiled" not in version.stdout, version
    checked = run_installed(installed, "margin", "check", str(ROOT / "examples" / "rooflines.md"), cwd=tmp_path)
    assert checked.returncode == 0 and "0 failed" in checked.stdout, checked.stdout + checked.stderr
