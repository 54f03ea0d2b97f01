"""`margin check` loads only what checking needs: other commands' modules load when those commands run.

A fresh interpreter runs ``margin check`` on a plain draft (no python
blocks, no measurements, the text report) and lists the modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Modules another command, a crash, a trusted python block or another report format needs, never a plain check.
NOT_FOR_CHECK = (
    "server.analysis.runner",  # trusted python blocks: processes and pipes
    "subprocess",
    "server.coverage_html",  # margin coverage
    "scaling_core.queries.coverage",
    "scaling_core.publish",  # margin render
    "scaling_core.document.session",  # margin eval
    "traceback",  # a crash report
    "server.sarif",  # other report formats
    "server.junit",
)

PROGRAM = """
import contextlib, io, json, sys
from server.launch import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", sys.argv[1]])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_a_plain_check_loads_no_other_commands_modules(tmp_path: Path) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("# Draft\n\n```calc\nx = 2 * 3\nx == 6\n```\n\nSo `2 * 3 = 6`, about 6<!-- = x -->.\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(draft)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0
    loaded = set(result["modules"])
    assert [name for name in NOT_FOR_CHECK if name in loaded] == []


COLLECTOR = """
import contextlib, gc, io, json, sys
import server.check_command as check
from server.launch import main
analyze, seen = check.analyze_document, []
def watched(text, path, *args, **kwargs):
    seen.append((path.rsplit("/", 1)[-1], gc.isenabled(), gc.get_freeze_count()))
    return analyze(text, path, *args, **kwargs)
check.analyze_document = watched
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", *sys.argv[1:]])
print(json.dumps({"code": code, "seen": seen, "enabled": gc.isenabled()}))
"""


def test_the_collector_is_held_while_each_draft_is_analysed(tmp_path: Path) -> None:
    """As in the language server: no cyclic collection during an analysis, what it keeps frozen after it."""
    drafts = [tmp_path / "a.md", tmp_path / "b.md"]
    for draft in drafts:
        draft.write_text("# Draft\n\n```calc\nx = 2 * 3\nx == 6\n```\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR, *map(str, drafts)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0 and result["enabled"]
    (a, a_enabled, a_frozen), (b, b_enabled, b_frozen) = result["seen"]
    assert (a, b) == ("a.md", "b.md") and not a_enabled and not b_enabled
    assert b_frozen > a_frozen  # the first analysis's survivors were frozen before the second began
