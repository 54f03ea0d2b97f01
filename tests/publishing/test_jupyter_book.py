"""Jupyter Book 1 (``jupyter-book build -W``) on examples/book with ``margin.sphinx``.

Jupyter Book 1 pins Sphinx 7 and myst-parser 3, so it lives in its own environment:
.ci/run makes ``.venv-jb1`` (``pip install 'jupyter-book<2' sphinx-exercise -e .``);
``MARGIN_JUPYTER_BOOK`` may name another ``jupyter-book`` executable. Marked ``publishing``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.publishing.conftest import plant

JUPYTER_BOOK = Path(os.environ.get("MARGIN_JUPYTER_BOOK", ROOT / ".venv-jb1" / "bin" / "jupyter-book"))
pytestmark = [
    pytest.mark.publishing,
    pytest.mark.skipif(not JUPYTER_BOOK.exists(), reason=f"Jupyter Book 1 is not installed at {JUPYTER_BOOK}"),
]


def jupyter_book(book: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(JUPYTER_BOOK), "build", "-W", "-n", "--keep-going", str(book)],
        capture_output=True, text=True, timeout=600, cwd=book,
    )  # fmt: skip


def test_jupyter_book_builds_the_book_with_W_and_shows_the_values(book: Path) -> None:
    result = jupyter_book(book)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    intro = (book / "_build" / "html" / "intro.html").read_text("utf-8")
    assert 'The run takes <span class="margin-value">22.5 days</span>' in intro
    assert "{calc}" not in intro and intro.count('class="margin-badge margin-pass"') == 2
    memory = (book / "_build" / "html" / "memory.html").read_text("utf-8")
    assert '<span class="margin-value">560 GB</span>' in memory and "margin-badge margin-pass" in memory


def test_a_planted_wrong_number_fails_jupyter_book_W_at_its_file_and_line(book: Path) -> None:
    line = plant(book / "memory.md", "840 GB<!-- = state -->", "640 GB<!-- = state -->")
    result = jupyter_book(book)
    assert result.returncode != 0
    assert f"memory.md:{line}: WARNING: check failed: computed 840 GB, not = 640 GB" in result.stdout + result.stderr
