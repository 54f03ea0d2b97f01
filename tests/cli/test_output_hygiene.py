"""Reports stay well-formed and harmless whatever a draft or its file name holds.

Control characters (U+0001, ESC sequences that clear a terminal, C1 controls)
and file names that are not UTF-8 must not make invalid XML or JSON, crash a
report written with ``-o``, or reach a terminal raw.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import xmlschema

from scaling_core import Config, analyze_document
from server import reports
from tests.conftest import ROOT

SCHEMAS = ROOT / "tests" / "schemas"
#: Every C0 control but tab and line breaks, DEL, a C1 control (CSI) and an ESC sequence that clears the screen.
CONTROLS = "".join(chr(c) for c in range(32) if chr(c) not in "\t\n\r") + "\x7f\x9b\x1b[2J"
DRAFT = (
    "# Title \x01 with \x1b[31mred\x1b[0m\n\n"
    "```calc\nt = 2 s\nx = 1 \x01 2\n```\n\n"
    "**Question 1 [q\x02]:** Is `2 * 3 = 7` right?\x03\n\n"
    "It takes about 5 s\x1b[2J<!-- ≈ t -->.\n\n"
    f"Every control: {CONTROLS} and `2 + 2 = 5` {CONTROLS}.\n"
)
#: A name with an ESC sequence and one byte that is not UTF-8 (``os.fsdecode`` gives a lone surrogate).
NAMES = ["esc\x1b[2Jname.md", os.fsdecode(b"not-utf8-\xff.md"), "ctl\x01name.md"]
#: What may not reach a terminal: C0 controls other than tab and newline, DEL, C1 controls, lone surrogates.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def margin(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args], cwd=cwd, capture_output=True, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
    )  # fmt: skip


@pytest.fixture
def drafts(tmp_path: Path) -> Path:
    for name in NAMES:
        (tmp_path / name).write_text(DRAFT, "utf-8")
    return tmp_path


def test_junit_and_sarif_stay_valid_with_control_characters_everywhere() -> None:
    analysis = analyze_document(DRAFT, NAMES[0], Config())
    assert analysis.diagnostics  # something to report
    schema = xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd")
    for name in NAMES:
        analysis = analyze_document(DRAFT, name, Config())
        xml = reports.to_junit([analysis], [name])
        schema.validate(xml)
        assert not UNSAFE.search(xml)
        sarif = reports.to_sarif([analysis], [name])
        sarif.encode("utf-8")  # no lone surrogate: writable as UTF-8
        document = json.loads(sarif)
        jsonschema.Draft7Validator(json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text("utf-8"))).validate(
            document
        )
        text = reports.to_json([analysis], [name])
        text.encode("utf-8")
        assert json.loads(text)["files"] == [name]  # escaped in JSON, read back exactly


@pytest.mark.parametrize("format", ["text", "json", "github", "junit", "sarif"])
def test_every_format_is_written_with_o_whatever_the_file_names(drafts: Path, format: str) -> None:
    out = drafts.parent / f"report.{format}"
    done = margin("check", "--format", format, "-o", str(out), ".", cwd=drafts)
    assert done.returncode == 1, done.stderr.decode()
    written = out.read_bytes().decode("utf-8")  # valid UTF-8
    if format == "junit":
        xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd").validate(written)
    if format in ("json", "sarif"):
        json.loads(written)
    if format in ("text", "github"):
        assert not UNSAFE.search(written), [m.group() for m in UNSAFE.finditer(written)][:5]


def test_the_text_report_escapes_controls_in_file_names_and_source_lines(drafts: Path) -> None:
    done = margin("check", "--format", "text", ".", cwd=drafts)
    shown = done.stdout.decode("utf-8")
    assert not UNSAFE.search(shown), [m.group() for m in UNSAFE.finditer(shown)][:5]
    assert "esc␛[2Jname.md:" in shown  # visible, one column each (carets stay aligned)
    assert "not-utf8-\\xff.md:" in shown
    lines = shown.splitlines()
    source = next(i for i, line in enumerate(lines) if "x = 1 ␁ 2" in line)
    assert lines[source + 1].index("^") == lines[source].index("␁")
    assert "\\x9b" in shown  # a C1 control, escaped
