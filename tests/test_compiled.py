"""The optional compiled engine (``MARGIN_COMPILE=1``, docs/cli.md "A compiled engine").

The list of compiled modules is checked on every run; CI's compiled run
(``.ci/run``, last step: a build with ``MARGIN_COMPILE=1`` in a copy of the
tree, ``MARGIN_EXPECT_COMPILED=1`` set) also checks that each listed module
is loaded compiled, so that the tests it runs there test compiled code.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, compiled, margin

sys.path.insert(0, str(ROOT / "build_support"))

import margin_build  # noqa: E402  (the build backend's helpers; build_support/ is its folder)


def module_name(path: str) -> str:
    """``scaling_core/expr/evaluator.py`` -> ``scaling_core.expr.evaluator``."""
    return path.removesuffix(".py").replace("/", ".")


def test_every_line_of_the_list_names_an_engine_module() -> None:
    patterns = margin_build.compiled_patterns()
    assert patterns and not any(pattern.startswith("#") for pattern in patterns)
    for pattern in patterns:  # a renamed or moved module must not drop out of the compiled build unnoticed
        assert [path for path in ROOT.glob(pattern) if path.name != "__init__.py"], pattern
    paths = margin_build.compiled_paths()
    assert "scaling_core/expr/evaluator.py" in paths  # what `margin --version` reads to say "compiled engine"
    assert all(path.startswith("scaling_core/") and not path.endswith("__init__.py") for path in paths)
    assert "scaling_core/text.py" not in paths  # server/lsp/buffer.py subclasses its LineIndex


def test_a_pure_build_compiles_nothing_and_a_compiled_one_asks_for_mypy_and_the_dependencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MARGIN_COMPILE", raising=False)
    assert not margin_build.compiling() and margin_build.extension_modules() == []
    monkeypatch.setenv("MARGIN_COMPILE", "1")
    wanted = margin_build.get_requires_for_build_editable()
    assert wanted[0] == margin_build.MYPYC_REQUIREMENT and any(r.startswith("numpy") for r in wanted)
    test_extra = (ROOT / "pyproject.toml").read_text("utf-8")
    assert f'"{margin_build.MYPYC_REQUIREMENT}"' in test_extra  # the same mypy as the type gate


@pytest.mark.skipif(
    os.environ.get("MARGIN_EXPECT_COMPILED") != "1",
    reason="only in CI's compiled run (.ci/run, MARGIN_EXPECT_COMPILED=1): this install is pure Python",
)
def test_each_listed_module_is_loaded_compiled_and_the_version_says_so(tmp_path: Path) -> None:
    for path in margin_build.compiled_paths():
        module = importlib.import_module(module_name(path))
        assert compiled(module), module.__file__
    assert margin("--version", cwd=tmp_path).stdout.strip().endswith("(compiled engine)")
