"""A configuration never poisons a run: bad chips, malformed files, wrong types and hostile globs.

Each bad configuration is a usage error (exit 2) whose message names the file
and the key, never an internal error; a chip that reaches the engine anyway
(the Python API, an editor setting) makes its bad fields unknown, never a
crash; an ``exclude`` glob cannot stall a run.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scaling_core import Config, analyze_document
from scaling_core.hardware.records import chip_problems, hardware_records
from server.globs import _Automaton, _regex, _tokens, glob_matches
from tests.cli.test_check_command import margin
from tests.conftest import ROOT, codes

DRAFT = "# Chip\n\nIt takes `1 TB / bad.hbm_bw = 1 s`.\n"


def _chip_toml(field: str, value: str) -> str:
    """A project chip 'bad' with good FLOP/s and HBM bandwidth, but ``field = value``."""
    fields = {"flops_bf16": "100 TFLOP/s", "hbm_bw": "1 TB/s", field: value}
    lines = [f'fields.{k} = {{ value = "{v}", source = "https://example.com" }}' for k, v in fields.items()]
    return "\n".join(["[chips.bad]", 'title = "Bad"', *lines, ""])


def _project(tmp_path: Path, config: str, name: str = "margin.toml") -> Path:
    (tmp_path / name).write_text(config, "utf-8")
    (tmp_path / "a.md").write_text(DRAFT, "utf-8")
    return tmp_path


def _usage_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


# --- 1. chips: the same checks from every source ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("hbm_bw", "0 TB/s", "must be greater than zero"),
        ("hbm_bw", "-3 TB/s", "must be greater than zero"),
        ("hbm_bw", "1e308 TB/s * 1e10", "is not a value"),  # overflows: the evaluator refuses it
        ("flops_bf16", "0 FLOP/s", "must be greater than zero"),
        ("ici_bw_bidi", "0 GB/s", "must be greater than zero"),
        ("hbm_bw", "[1, 2] TB/s", "one value, not a sweep"),
    ],
)
def test_an_impossible_chip_field_is_a_usage_error_naming_chip_and_field(
    tmp_path: Path, field: str, value: str, says: str
) -> None:
    config = _chip_toml(field, value)
    result = margin("check", ".", cwd=_project(tmp_path, config))
    _usage_error(result, "margin.toml", "chip 'bad'", f"field '{field}'", says)


def test_margin_hardware_with_a_zero_bandwidth_chip_is_a_usage_error(tmp_path: Path) -> None:
    _usage_error(margin("hardware", cwd=_project(tmp_path, _chip_toml("hbm_bw", "0 TB/s"))), "field 'hbm_bw'")


BAD_CHIPS = {
    "bad": {"fields": {"flops_bf16": {"value": "100 TFLOP/s"}, "hbm_bw": {"value": "0 TB/s"}}},
    "h100": {"fields": {"ici_bw_oneway": {"value": "-1 GB/s"}}},  # overrides a packaged chip's field
}


def test_a_bad_chip_given_to_the_engine_directly_is_unknown_never_a_crash() -> None:
    config = Config(chips=BAD_CHIPS)
    problems = "\n".join(chip_problems(config))
    assert "chip 'bad': field 'hbm_bw'" in problems and "chip 'h100': field 'ici_bw_oneway'" in problems
    records = hardware_records(config)
    bad = records["bad"]
    assert "hbm_bw" not in bad.fields and "critical_intensity" not in bad.fields
    assert "0 TB/s" in bad.unknown["hbm_bw"]
    assert "hbm_bw" in bad.unknown["critical_intensity"]  # a derived field that cannot be computed says why
    assert bad.fields["flops_bf16"].value == 1e14
    h100 = records["h100"]
    assert "ici_bw_oneway" in h100.unknown and "ici_egress_oneway" in h100.unknown
    assert h100.fields["hbm_bw"].value == 3.35e12  # the other packaged fields stay


@pytest.mark.parametrize(
    "use", ["bad.hbm_bw", "bad.critical_intensity", 'h100["8x8"].scaleout_bw', "h100.ici_egress_oneway"]
)
def test_a_draft_using_an_unusable_chip_field_is_untested_with_the_reason(use: str) -> None:
    text = f"# Chip\n\n```calc\nx = {use}\n```\n\nIt is `x = 1 GB/s`.\n"
    analysis = analyze_document(text, "draft.md", Config(chips=BAD_CHIPS))
    assert "E999" not in codes(analysis)
    untested = [d for d in analysis.diagnostics if d.code == "T003"]
    assert untested and "not known" in untested[0].message, analysis.diagnostics
    assert not [c for c in analysis.checks if c.status in ("pass", "fail")]


def test_derived_fields_that_overflow_are_absent_with_a_note() -> None:
    chips = {"huge": {"fields": {"flops_bf16": {"value": "1e300 FLOP/s"}, "hbm_bw": {"value": "1e-300 B/s"}}}}
    record = hardware_records(Config(chips=chips))["huge"]
    assert "critical_intensity" not in record.fields
    assert "cannot be computed" in record.unknown["critical_intensity"]


def test_good_project_chips_still_work(tmp_path: Path) -> None:
    config = _chip_toml("hbm_bw", "1 TB/s")
    result = margin("check", ".", cwd=_project(tmp_path, config))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checks 1 passed" in result.stdout


# --- 2. malformed files and wrongly typed values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "config", "says"),
    [
        ("pyproject.toml", "tool = 5\n", "'tool' must be a table"),
        ("pyproject.toml", "[tool]\nmargin = 5\n", "'tool.margin' must be a table"),
        ("pyproject.toml", '[tool]\nmargin = "strict"\n', "'tool.margin' must be a table"),
        ("pyproject.toml", "[tool.margin]\nmax_array_elements = true\n", "max_array_elements: must be a positive"),
        ("margin.toml", "max_array_elements = true\n", "max_array_elements: must be a positive integer"),
        ("margin.toml", "severity = { C001 = [] }\n", "severity of C001 must be"),
        ("margin.toml", "analysis_time_limit = 0\n", "analysis_time_limit: must be a positive number of seconds"),
        ("margin.toml", 'analysis_time_limit = "20 s"\n', "analysis_time_limit: must be a number of seconds"),
        ("pyproject.toml", "[tool.margin]\nmax_total_elements = -5\n", "max_total_elements: must be a positive"),
        ("margin.toml", "tolerance = true\n", "tolerance: must be a number"),
        ("margin.toml", "exclude = 5\n", "exclude: must be a list"),
        ("margin.toml", "chips = 5\n", "chips: must be a table"),
        ("margin.toml", "chips.x = 5\n", "chip 'x' must be a table"),
        ("margin.toml", "chips.x.fields = 5\n", "'fields' must be a table"),
        ("margin.toml", "import_roots = 5\n", "import_roots: must be a list"),
        ("margin.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("margin.toml", "x = " + "{ a = " * 5000 + "1" + " }" * 5000 + "\n", "nested too deeply"),
        ("pyproject.toml", "[tool.margin]\nx = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("margin.toml", "tolerance = \n", "cannot read configuration"),
    ],
)
def test_a_malformed_configuration_exits_2_with_a_message(tmp_path: Path, name: str, config: str, says: str) -> None:
    result = margin("check", ".", cwd=_project(tmp_path, config, name))
    _usage_error(result, name, says)


def test_a_malformed_pyproject_is_reported_when_found_on_the_way_up(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("tool = 5\n", "utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("It is `2 * 3 = 6`.\n", "utf-8")
    _usage_error(margin("check", "docs/a.md", cwd=tmp_path), "pyproject.toml", "'tool' must be a table")


def test_the_python_api_raises_its_error_for_a_bad_chip() -> None:
    import margin as api

    with pytest.raises(api.MarginError, match="field 'hbm_bw'"):
        api.check_text("x\n", config={"chips": BAD_CHIPS})


# --- 3. globs: linear time, same answers -----------------------------------------------------------------------------

HOSTILE = "*a*a*a*a*a*a*a*a*a*b"


def test_a_hostile_exclude_glob_finishes_fast() -> None:
    """In a subprocess with a deadline: a backtracking matcher would never return (not a timed assert)."""
    code = textwrap.dedent(f"""\
        from server.globs import glob_matches
        name = "a" * 200
        assert not glob_matches({HOSTILE!r}, name)
        assert not glob_matches({HOSTILE!r}, name + "/x.md")
        assert not glob_matches("**a**a**a**a**a**a**a**a**b", "a/" * 100)
        assert glob_matches({HOSTILE!r}, name + "b")
        print("done")
        """)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=20)
    assert result.stdout.strip() == "done", result.stderr


def test_margin_check_with_a_hostile_exclude_finishes(tmp_path: Path) -> None:
    (tmp_path / "margin.toml").write_text(f'exclude = ["{HOSTILE}"]\n', "utf-8")
    (tmp_path / ("a" * 200 + ".md")).write_text("It is `2 * 3 = 6`.\n", "utf-8")
    (tmp_path / ("a" * 150 + "b")).mkdir()
    result = margin("check", ".", cwd=tmp_path)  # the helper's own timeout is the deadline
    assert result.returncode == 0 and "checks 1 passed" in result.stdout, result.stdout + result.stderr


PATTERN_PARTS = st.sampled_from(["a", "b", "/", ".", "*", "**", "**/", "?"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PATTERN_PARTS, max_size=8).map("".join), st.text(alphabet="ab/.", max_size=12))
def test_the_automaton_agrees_with_the_regex(pattern: str, path: str) -> None:
    tokens = _tokens(pattern)
    assert _Automaton(tokens).matches(path) == (_regex(tokens).match(path) is not None)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/node_modules", "node_modules", True),
        ("**/node_modules", "a/b/node_modules", True),
        ("drafts/old/**", "drafts/old/x/y.md", True),
        ("*.md", "a/b.md", False),
        ("**/*.md", "a/b.md", True),
        ("a*b*c*d*e", "axxbxxcxxdxxe", True),
        ("a*b*c*d*e", "axxbxx/cxxdxxe", False),
        ("a**b**c**d**e", "ax/xbx/xcxxdxxe", True),
        ("?", "/", False),
    ],
)
def test_glob_meanings(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


def test_chip_values_are_checked_numbers() -> None:
    """The derived fields of every packaged chip are finite and positive (the same check as for project chips)."""
    for record in hardware_records(Config()).values():
        assert not record.unknown
        assert all(math.isfinite(v.value) and v.value > 0 for v in record.fields.values())
