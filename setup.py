"""Builds margin; with ``MARGIN_COMPILE=1`` the modules in build_support/compiled-modules.txt are compiled with mypyc.

The metadata is in pyproject.toml; this file only adds the compiled modules
(docs/cli.md, "A compiled engine").  Without ``MARGIN_COMPILE=1`` the build
is pure Python, the default.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).parent / "build_support"))  # the build backend's folder (pyproject.toml)

from margin_build import extension_modules  # noqa: E402

setup(ext_modules=extension_modules())
