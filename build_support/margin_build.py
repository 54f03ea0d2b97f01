"""Margin's build backend: setuptools' own, plus mypyc when ``MARGIN_COMPILE=1`` asks for a compiled engine.

The pattern setuptools documents for dynamic build requirements
("Dynamic build dependencies and other build_meta tweaks"): every hook is
setuptools', and a wheel built with ``MARGIN_COMPILE=1`` also requires mypy
(which brings mypyc), pinned as the type gate of the ``test`` extra is, and
Margin's own dependencies (mypyc type-checks the modules it compiles, which
import markdown-it-py and NumPy).  The modules compiled are listed in
``compiled-modules.txt`` next to this file; ``setup.py`` reads it.
docs/cli.md ("A compiled engine") says when one is worth building.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook not defined below is setuptools')

#: mypyc comes with mypy; the same pin as the type gate (pyproject.toml, the ``test`` extra).
MYPYC_REQUIREMENT = "mypy==2.4.1"


def compiled_requirements() -> list[str]:
    """What a compiled build needs: mypy, and Margin's dependencies (pyproject.toml) for the type check."""
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    return [MYPYC_REQUIREMENT, *project["project"]["dependencies"]]


def compiling() -> bool:
    """Whether this build compiles the engine (``MARGIN_COMPILE=1``)."""
    return os.environ.get("MARGIN_COMPILE", "") == "1"


def compiled_patterns() -> list[str]:
    """The paths and globs ``compiled-modules.txt`` lists (its comment lines left out)."""
    lines = (Path(__file__).parent / "compiled-modules.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def compiled_paths() -> list[str]:
    """The files :func:`compiled_patterns` names (globs expanded, ``__init__.py`` left out), sorted, from the root."""
    root = Path(__file__).parent.parent
    paths = {path for pattern in compiled_patterns() for path in root.glob(pattern) if path.name != "__init__.py"}
    return sorted(path.relative_to(root).as_posix() for path in paths)


def extension_modules() -> list[object]:
    """The mypyc extension modules when compiling (``MARGIN_COMPILE=1``), else none; setup.py builds them."""
    if not compiling():
        return []
    from mypyc.build import mypycify  # only a compiled build has mypy (get_requires_for_build_wheel)

    level = os.environ.get("MYPYC_OPT_LEVEL", "3")
    return list(mypycify(compiled_paths(), opt_level=level, group_name="margin_engine"))


def get_requires_for_build_wheel(config_settings: dict[str, str] | None = None) -> list[str]:
    """setuptools' requirements for a wheel; when compiling, :func:`compiled_requirements`.

    setuptools finds its requirements by running setup.py, which cannot run
    without mypyc when compiling; setup.py declares no ``setup_requires``, so
    setuptools itself asks for nothing more.
    """
    if compiling():
        return compiled_requirements()
    return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: dict[str, str] | None = None) -> list[str]:
    """setuptools' requirements for an editable install; when compiling, as for a wheel."""
    if compiling():
        return compiled_requirements()
    return _setuptools.get_requires_for_build_editable(config_settings)
