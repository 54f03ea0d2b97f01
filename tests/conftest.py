"""Shared fixtures and helpers."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.document.session import CalcSession, Evaluation

ROOT = Path(__file__).resolve().parent.parent

# Servers the tests start keep their generated-code cache here, not in the user's home.
os.environ.setdefault("MARGIN_CACHE_DIR", tempfile.mkdtemp(prefix="margin-test-cache-"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/**/*.expected")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: builds environments from PyPI (deselect with -m 'not slow')")


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
