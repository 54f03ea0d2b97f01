"""Editor settings and project files never poison the server: bad chips and wrongly typed values from
``initializationOptions``, ``workspace/didChangeConfiguration`` or the project's ``margin.toml`` are shown
once (``window/showMessage``), the other settings apply, and the server keeps answering.

Driven over raw stdio (:class:`tests.lsp.test_faults.RawServer`), against the real server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.test_faults import RawServer

#: A check that passes only with a 20% tolerance, and a use of the chip field that is not usable.
DRAFT = "# Chip\n\nIt is `2 * 3 ≈ 7`.\n\n```calc\nt = 1 TB / bad.hbm_bw\n```\n"
BAD_CHIPS = {"bad": {"fields": {"flops_bf16": {"value": "100 TFLOP/s"}, "hbm_bw": {"value": "0 TB/s"}}}}


@pytest.fixture
def server() -> Iterator[RawServer]:
    started = RawServer()
    yield started
    started.stop()


def _initialize(server: RawServer, root: Path, options: object = None) -> None:
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": options}
    assert "result" in server.call("initialize", params)
    server.notify("initialized", {})


def _open(server: RawServer, root: Path, text: str, version: int = 1) -> str:
    uri = (root / "draft.md").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": version, "text": text}})  # fmt: skip
    return uri


def _shown(server: RawServer, *fragments: str) -> dict[str, Any]:
    message = server.wait_for(lambda m: m.get("method") == "window/showMessage")["params"]
    assert message["type"] == 2, message  # a warning
    for fragment in fragments:
        assert fragment in message["message"], message
    return dict(message)


def _codes(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [str(d.get("code")) for d in diagnostics]


def _answers(server: RawServer, uri: str) -> None:
    """The server still answers requests about the document and about itself."""
    server.alive()
    hover = server.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 8}})
    assert "result" in hover and hover["result"] is not None, hover


def test_a_bad_chip_in_initialization_options_is_shown_and_the_rest_applies(server: RawServer, tmp_path: Path) -> None:
    _initialize(server, tmp_path, {"margin": {"tolerance": "20%", "chips": BAD_CHIPS}})
    _shown(server, "chip 'bad'", "field 'hbm_bw'", "must be greater than zero")
    uri = _open(server, tmp_path, DRAFT)
    found = server.diagnostics(uri, 1)
    assert "E999" not in _codes(found)
    assert "C001" not in _codes(found)  # the 20% tolerance applies
    untested = [d for d in found if d.get("code") == "T003"]
    assert untested and "0 TB/s" in untested[0]["message"], found
    _answers(server, uri)


def test_a_bad_setting_sent_later_is_shown_and_the_server_keeps_answering(server: RawServer, tmp_path: Path) -> None:
    _initialize(server, tmp_path)
    uri = _open(server, tmp_path, DRAFT)
    assert "C001" in _codes(server.diagnostics(uri, 1))  # 5% by default
    chips = {**BAD_CHIPS, "zero": {"fields": {"flops_bf16": {"value": "0 FLOP/s"}}}}
    settings = {"margin": {"tolerance": 0.2, "chips": chips, "maxArrayElements": True}}
    server.notify("workspace/didChangeConfiguration", {"settings": settings})
    _shown(server, "chip 'zero': field 'flops_bf16'", "chip 'bad': field 'hbm_bw'", "max_array_elements")
    found = server.diagnostics(uri, 1)  # re-published for the new settings
    assert "E999" not in _codes(found) and "C001" not in _codes(found) and "T003" in _codes(found), found
    _answers(server, uri)
    server.notify("workspace/didChangeConfiguration", {"settings": settings})  # the same problems: not shown again
    server.alive()
    assert len(server.notifications("window/showMessage")) == 0


def test_a_bad_project_file_keeps_its_good_settings(server: RawServer, tmp_path: Path) -> None:
    (tmp_path / "margin.toml").write_text(
        'tolerance = "20%"\nmax_array_elements = true\n[chips.bad]\nfields.hbm_bw = { value = "0 TB/s" }\n', "utf-8"
    )
    _initialize(server, tmp_path)
    _shown(server, "margin.toml", "max_array_elements: must be a positive integer", "field 'hbm_bw'")
    uri = _open(server, tmp_path, DRAFT)
    found = server.diagnostics(uri, 1)
    assert "C001" not in _codes(found) and "E999" not in _codes(found) and "T003" in _codes(found), found
    _answers(server, uri)


@pytest.mark.parametrize(
    "pyproject", ["tool = 5\n", "[tool]\nmargin = 5\n", "[tool.margin]\nx = " + "[" * 5000 + "]" * 5000]
)
def test_a_malformed_pyproject_is_shown_and_the_defaults_apply(
    server: RawServer, tmp_path: Path, pyproject: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject, "utf-8")
    _initialize(server, tmp_path)
    _shown(server, "pyproject.toml")
    uri = _open(server, tmp_path, DRAFT)
    assert "C001" in _codes(server.diagnostics(uri, 1))
    _answers(server, uri)


def test_the_budgets_are_editor_settings_validated_like_the_others(server: RawServer, tmp_path: Path) -> None:
    _initialize(server, tmp_path, {"margin": {"maxTotalElements": 150, "analysisTimeLimit": 0}})
    _shown(server, "analysis_time_limit: must be a positive number of seconds")
    uri = _open(server, tmp_path, "```calc\na = range(100)\nb = a * 2\nc = 1 + 1\n```\n")
    found = server.diagnostics(uri, 1)
    assert _codes(found) == ["E003"] and "of 150 sweep elements" in found[0]["message"], found
    server.alive()
