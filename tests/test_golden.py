"""Golden documents: every diagnostic rendered, every value computed.

Each ``tests/golden/<phase>/<name>.md`` has a ``<name>.expected`` beside it
holding the compiler-style diagnostics and the computed values.  Run
``pytest tests/test_golden.py --update-golden`` to rewrite them, then review
the diff.
"""

from __future__ import annotations

import atexit
import functools
import tomllib
from pathlib import Path

import pytest

from scaling_core import CODES, Config, analyze_document, config_from_mapping
from scaling_core.document.analysis import ImportContext
from scaling_core.render import render_analysis, render_values
from server.analysis.runner import AnalysisRunner
from server.measurements import CACHE_FILE, MeasurementCache

GOLDEN = Path(__file__).parent / "golden"
DOCUMENTS = sorted(GOLDEN.rglob("*.md"))


def load_relative(importer: str, target: str) -> tuple[str, str] | None:
    candidate = GOLDEN / Path(importer).parent / target
    if not candidate.is_file():
        return None
    return candidate.relative_to(GOLDEN).as_posix(), candidate.read_text("utf-8")


def folder_config(document: Path) -> Config:
    """The settings of a golden folder: its ``margin.toml`` if it has one (as ``margin check`` reads it)."""
    settings = document.parent / "margin.toml"
    if not settings.is_file():
        return Config()
    config, problems = config_from_mapping(tomllib.loads(settings.read_text("utf-8")))
    assert problems == [], problems
    return config


@functools.cache
def analysis_process() -> AnalysisRunner:
    """The analysis process of folders whose margin.toml trusts them (python calc blocks run there)."""
    runner = AnalysisRunner()
    atexit.register(runner.close)
    return runner


def render(document: Path) -> str:
    name = document.relative_to(GOLDEN).as_posix()
    text = document.read_bytes().decode("utf-8")
    config = folder_config(document)
    # A folder with a .margin/measurements.json reads its measure_* calls from it, as margin check does.
    measurements = MeasurementCache(document.parent) if (document.parent / CACHE_FILE).is_file() else None
    context = ImportContext(
        load_relative, trusted=analysis_process() if config.trust else None, measurements=measurements
    )
    analysis = analyze_document(text, name, config, context=context)
    return f"{render_analysis(analysis)}\n\n--- values\n{render_values(analysis)}\n".replace("\r", "␍")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(GOLDEN).as_posix())
def test_golden_document(document: Path, request: pytest.FixtureRequest) -> None:
    expected_path = document.with_suffix(".expected")
    actual = render(document)
    if request.config.getoption("--update-golden"):
        expected_path.write_text(actual, "utf-8")
    assert expected_path.exists(), f"no {expected_path.name}: run pytest --update-golden and review it"
    assert actual == expected_path.read_text("utf-8")


def test_every_diagnostic_code_has_a_golden_document() -> None:
    shown = "".join(p.read_text("utf-8") for p in GOLDEN.rglob("*.expected"))
    # E999 is what a bug in Margin becomes: no document may produce it (tests/lsp/test_faults.py injects one).
    missing = [code for code in CODES if f" {code}:" not in shown and code != "E999"]
    assert missing == [], f"codes without a golden document: {missing}"


def test_ok_documents_have_no_errors_or_warnings() -> None:
    for document in sorted((GOLDEN / "ok").glob("*.md")):
        name = document.relative_to(GOLDEN).as_posix()
        analysis = analyze_document(document.read_text("utf-8"), name, context=ImportContext(load_relative))
        assert [d.code for d in analysis.diagnostics if d.severity <= 2] == [], document.name
        assert all(c.status == "pass" for c in analysis.checks), document.name
