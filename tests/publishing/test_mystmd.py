"""The mystmd plugin (integrations/mystmd/margin.mjs) in a real ``myst build`` (Jupyter Book 2's engine).

Offline, ``myst build --site`` writes each page's processed content (``_build/site/content/*.json``)
but cannot fetch a site theme, so the test points the book at an empty local template.
Marked ``publishing``; .ci/run installs mystmd with ``npm ci`` in integrations/mystmd.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.publishing.conftest import plant

MYST = ROOT / "integrations" / "mystmd" / "node_modules" / ".bin" / "myst"
pytestmark = [
    pytest.mark.publishing,
    pytest.mark.skipif(not MYST.exists(), reason="mystmd is not installed (npm ci in integrations/mystmd)"),
]


def myst_build(book: Path, *options: str) -> subprocess.CompletedProcess[str]:
    template = book.parent / "template"
    template.mkdir(exist_ok=True)
    (template / "template.yml").write_text("myst: v1\nkind: site\ntitle: offline test template\n", "utf-8")
    config = (book / "myst.yml").read_text("utf-8")
    plugin = ROOT / "integrations" / "mystmd" / "margin.mjs"
    config = config.replace("../../integrations/mystmd/margin.mjs", str(plugin))
    (book / "myst.yml").write_text(config.replace("template: book-theme", f"template: {template}"), "utf-8")
    environment = {**os.environ, "MARGIN_COMMAND": f"{sys.executable} -m server", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [str(MYST), "build", *options], capture_output=True, text=True, timeout=300, cwd=book, env=environment
    )


def content(book: Path, page: str) -> str:
    """A built page's text: its text nodes run together, code and comments marked on lines of their own."""
    tree = json.loads((book / "_build" / "site" / "content" / f"{page}.json").read_text("utf-8"))["mdast"]
    found: list[str] = []

    def walk(node: dict[str, object]) -> None:
        if node.get("type") == "text":
            found.append(str(node["value"]))
        elif node.get("type") in ("code", "inlineCode", "comment"):
            found.append(f"\n<{node['type']}>{node.get('value')}\n")
        for child in node.get("children", []):  # type: ignore[attr-defined]
            walk(child)

    walk(tree)
    return "".join(found)


def test_the_book_builds_strictly_and_shows_every_value_badge_and_annotated_block(book: Path) -> None:
    result = myst_build(book, "--site", "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    intro, memory = content(book, "index"), content(book, "memory")
    for sentence in ("The run takes 22.5 days\non 8192 H100s", "the run costs 11.9 MUSD", "longer: 4 times",
                     "The whole run: 1.19e7 USD."):  # fmt: skip
        assert sentence in intro, sentence
    for sentence in (
        "That is 840 GB, 840 GB.",
        "So at least 11 H100s",
        "Adam keeps 8 bytes per parameter: 560 GB in all",
    ):
        assert sentence in memory, sentence
    assert "<inlineCode>t -> days" not in intro and "{calc}" not in intro  # no role left unevaluated
    assert "t = C / (chips * h100.flops_bf16 * mfu) -> days  # = 22.5 days" in intro
    assert "state = N * bytes_per_param -> TB           # = 0.84 TB" in memory  # ```{calc}
    assert "min_chips == 11                     # ✓" in memory  # :::{calc}
    assert intro.count("✓ passed Question") == 2 and "✓ passed How many bytes" in memory  # problems, {exercise}
    assert "<comment>" not in intro  # claim markers and the hidden calc block are left out


def test_markdown_export_keeps_numbers_without_claim_comments(book: Path) -> None:
    config = (book / "myst.yml").read_text("utf-8")
    export = "  exports:\n    - format: md\n      articles: [intro.md]\n      output: _build/md/intro.md\n"
    (book / "myst.yml").write_text(config.replace("  plugins:", export + "  plugins:"), "utf-8")
    result = myst_build(book, "--md")
    assert result.returncode == 0, result.stdout + result.stderr
    exported = (book / "_build" / "md" / "intro.md").read_text("utf-8")
    assert "about 22 days, roughly\n3 weeks." in exported
    assert "%" not in exported.replace("40% MFU", "") and "≈ t" not in exported


def test_a_planted_wrong_number_fails_the_strict_build_at_its_file_and_line(book: Path) -> None:
    line = plant(book / "memory.md", "840 GB<!-- = state -->", "640 GB<!-- = state -->")
    result = myst_build(book, "--site", "--strict")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"memory.md:{line}:30 check failed: computed 840 GB, not = 640 GB" in output, output
