"""The Pandoc Lua filter (integrations/pandoc/margin.lua) with Debian's ``pandoc`` on examples/book.

Marked ``publishing``: real builds, run by .ci/run as their own step (it installs pandoc).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.publishing.conftest import plant

FILTER = ROOT / "integrations" / "pandoc" / "margin.lua"
pytestmark = [
    pytest.mark.publishing,
    pytest.mark.skipif(shutil.which("pandoc") is None, reason="pandoc is not installed (apt-get install pandoc)"),
]


def pandoc(book: Path, page: str, *options: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "MARGIN_COMMAND": f"{sys.executable} -m server", "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        ["pandoc", "--wrap=none", "--lua-filter", str(FILTER), page, *options],
        capture_output=True, text=True, timeout=120, cwd=book, env=environment,
    )  # fmt: skip


def test_pandoc_shows_every_value_badge_and_annotated_block(book: Path) -> None:
    result = pandoc(book, "intro.md", "-t", "html")
    assert result.returncode == 0, result.stderr
    page = result.stdout
    assert "{calc}" not in page
    assert 'The run takes <span class="margin-value" title="t -&gt; days">22.5 days</span>' in page
    for value in ("8192", "11.9 MUSD", "1.19e7 USD"):
        assert f">{value}</span>" in page
    assert "t = C / (chips * h100.flops_bf16 * mfu) -&gt; days  # = 22.5 days" in page
    assert page.count('<span class="margin-badge margin-pass">✓ passed</span>') == 2
    assert "&lt;!--" not in page and "≈ t" not in page  # claim markers and hidden blocks are left out
    assert "price = 2.7" not in page


def test_markdown_output_keeps_the_numbers_and_drops_the_claim_markers(book: Path) -> None:
    result = pandoc(book, "intro.md", "-t", "commonmark")
    assert result.returncode == 0, result.stderr
    assert "about 22 days, roughly 3 weeks." in result.stdout
    assert "<!--" not in result.stdout


def test_roles_of_an_importing_page_get_their_values(book: Path) -> None:
    result = pandoc(book, "memory.md", "-t", "html")
    assert result.returncode == 0, result.stderr
    for value in ("840 GB", "11", "8 bytes", "560 GB"):
        assert f">{value}</span>" in result.stdout, value
    assert "min_chips == 11                     # ✓" in result.stdout  # the :::{calc} block


def test_a_planted_wrong_number_fails_the_conversion_at_its_file_and_line(book: Path) -> None:
    line = plant(book / "intro.md", "about 22 days<!-- ≈ t -->", "about 12 days<!-- ≈ t -->")
    result = pandoc(book, "intro.md", "-t", "html")
    assert result.returncode != 0
    assert f"intro.md:{line}:42: error C001: check failed: computed 22.49 days, not ≈ 12 days" in result.stderr
    warned = pandoc(book, "intro.md", "-t", "html", MARGIN_FAIL_ON="warning")
    assert warned.returncode == 0 and f"intro.md:{line}:42: warning C001" in warned.stderr


def test_a_role_without_a_value_fails_and_shows_its_expression(book: Path) -> None:
    plant(book / "intro.md", "{calc}`cost -> MUSD`", "{calc}`costs -> MUSD`")
    result = pandoc(book, "intro.md", "-t", "html")
    assert result.returncode != 0 and "{calc}`costs -> MUSD` has no value: N001" in result.stderr
    shown = pandoc(book, "intro.md", "-t", "html", MARGIN_FAIL_ON="none")
    assert '<code class="margin-unevaluated">costs -&gt; MUSD</code>' in shown.stdout


def test_a_json_file_made_beforehand_is_read_instead_of_running_margin(book: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "server", "render", "--format", "json", "intro.md", "-o", "_margin.json"],
        cwd=book, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    report = json.loads((book / "_margin.json").read_text("utf-8"))
    report["files"]["intro.md"]["roles"][0]["display"] = "from the file"
    (book / "_margin.json").write_text(json.dumps(report), "utf-8")
    result = pandoc(book, "intro.md", "-t", "html", MARGIN_JSON="_margin.json", MARGIN_COMMAND="false")
    assert result.returncode == 0, result.stderr
    assert ">from the file</span>" in result.stdout
