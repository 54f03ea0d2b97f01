"""Fixtures for trusted code: a real analysis process, real JAX (tests that need it skip without it)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.document.analysis import ImportContext
from server.analysis.runner import AnalysisRunner

#: JAX is looked for without importing it: the test process itself must never import it.
needs_jax = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None, reason="JAX is not installed (pip install 'margin[jax]')"
)


@pytest.fixture(scope="module")
def runner() -> Iterator[AnalysisRunner]:
    """One analysis process for the tests of a module (started by the first trusted block)."""
    made = AnalysisRunner()
    yield made
    made.close()


def trusted(text: str, runner: AnalysisRunner, *, trust: bool = True) -> DocumentAnalysis:
    """Analyse ``text`` as ``margin check`` does in a workspace with ``trust``."""
    return analyze_document(text, "draft.md", Config(trust=trust), context=ImportContext(trusted=runner))


def block(code: str) -> str:
    """A python calc block holding ``code``."""
    return f"```python calc\n{code.strip()}\n```\n"


def calc(code: str) -> str:
    """A calc block holding ``code``."""
    return f"```calc\n{code.strip()}\n```\n"
