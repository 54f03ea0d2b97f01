"""Shared set-up of the publishing tests: a copy of examples/book, and the tools that build it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

BOOK = ROOT / "examples" / "book"


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A fresh copy of the example book (builds write next to their sources)."""
    target = tmp_path / "book"
    shutil.copytree(BOOK, target, ignore=shutil.ignore_patterns("_build", "node_modules"))
    return target


def plant(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (written once) by ``new`` in a page; the 1-based line of the change."""
    text = path.read_text("utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), "utf-8")
    return text[: text.index(old)].count("\n") + 1
