"""The packaged hardware catalog is complete, consistent and sourced."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scaling_core import Config
from scaling_core.expr.constant import evaluate_constant
from scaling_core.hardware.catalog import DERIVED, FIELDS, REQUIRED, packaged_chips
from scaling_core.hardware.records import chip_problems, hardware_records, packaged_records
from scaling_core.hardware.reference import catalog_markdown
from tests.cli.test_check_command import margin
from tests.conftest import ROOT, run

CHIPS = ["tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu7x", "a100", "h100", "h200", "b200", "gb200"]


def test_the_catalog_has_every_chip_the_spec_names() -> None:
    assert set(CHIPS) <= set(packaged_records())


@pytest.mark.parametrize("chip", [c.name for c in packaged_chips()])
def test_every_record_has_required_fields_units_and_sources(chip: str) -> None:
    raw = next(c for c in packaged_chips() if c.name == chip)
    record = packaged_records()[chip]
    assert set(REQUIRED) <= set(record.fields), "missing required fields"
    assert set(raw.fields) <= set(FIELDS), "unknown field names"
    for name, text in raw.fields.items():
        assert record.fields[name].dim == FIELDS[name][0], f"{name} = {text} has the wrong unit"
        assert raw.sources[name].startswith("https://"), f"{name} has no source URL"
    ratio = record.fields["ici_bw_bidi"].value / record.fields["ici_bw_oneway"].value
    assert ratio == pytest.approx(2), "bidirectional must be twice one-way"
    for name in DERIVED:
        assert name in record.fields and record.sources[name].startswith("derived: ")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [("tpu_v5e.critical_intensity", 240.5), ("tpu_v5p.ici_intensity", 2550), ("h100.critical_intensity", 295.3),
     ("b200.critical_intensity", 281.25), ("h100.ici_egress_oneway", 450e9), ("tpu7x.ici_intensity", 12817),
     ("tpu_v5e.ici_intensity", 2189)],
)  # fmt: skip
def test_derived_fields_match_the_books_numbers(expression: str, expected: float) -> None:
    value = run(expression).value
    assert value is not None and value.quantity is not None
    assert value.quantity.value == pytest.approx(expected, rel=2e-3)


def test_config_chips_add_and_override_fields() -> None:
    config = Config(chips={
        "my_chip": {"title": "Mine", "fields": {"flops_bf16": {"value": "100 TFLOP/s", "source": "https://example.com"}}},
        "h100": {"fields": {"flops_bf16": {"value": "1000 TFLOP/s", "source": "https://example.com"}}},
    })  # fmt: skip
    records = hardware_records(config)
    assert records["my_chip"].fields["flops_bf16"].value == 1e14
    assert records["h100"].fields["flops_bf16"].value == 1e15
    assert records["h100"].fields["hbm_bw"].value == 3.35e12  # kept from the catalog
    assert chip_problems(config) == []


def test_bad_config_chips_are_reported_not_raised() -> None:
    config = Config(chips={
        "a": {"fields": {"hbm": {"value": "3 s", "source": ""}}},
        "b": {"fields": {"hbm_bw": {"value": "lots"}}},
        "c": "not a table",
        "d": {"fields": {"hbm": 5}},
    })  # fmt: skip
    problems = chip_problems(config)
    assert len(problems) == 4
    joined = "\n".join(problems)
    for fragment in (
        "'c' must be a table",
        "field 'hbm' needs value",
        "'3 s' must be in byte",
        "'lots' is not a value",
    ):
        assert fragment in joined
    hardware_records(config)  # still builds, skipping the bad fields


# -- every value matches its cited source, or says why not ----------------------
#: Figures as the cited pages write them (per chip; NVIDIA's tensor figures are with 2:4 sparsity).
WRITTEN = {
    "tpu_v4": {"flops_bf16": "275 TFLOP/s", "hbm": "32 GiB", "hbm_bw": "1200 GB/s"},
    "tpu_v5e": {"flops_bf16": "197 TFLOP/s", "flops_int8": "393 TFLOP/s", "hbm": "16 GB", "hbm_bw": "819 GB/s"},
    "tpu_v5p": {"flops_bf16": "459 TFLOP/s", "hbm": "95 GiB", "hbm_bw": "2765 GB/s"},
    "tpu_v6e": {"flops_bf16": "918 TFLOP/s", "flops_int8": "1836 TFLOP/s", "hbm": "32 GB", "hbm_bw": "1638 GB/s",
                "dcn_bw": "100 Gbit/s"},
    "tpu7x": {"flops_bf16": "2307 TFLOP/s", "flops_fp8": "4614 TFLOP/s", "hbm": "192 GiB", "hbm_bw": "7380 GB/s",
              "dcn_bw": "100 Gbit/s"},
    "a100": {"flops_bf16": "312 TFLOP/s", "flops_int8": "624 TFLOP/s", "hbm": "80 GB", "hbm_bw": "2039 GB/s",
             "pcie_bw": "64 GB/s"},
    "h100": {"flops_bf16": "1979 TFLOP/s", "flops_fp8": "3958 TFLOP/s", "flops_int8": "3958 TFLOP/s", "hbm": "80 GB",
             "hbm_bw": "3.35 TB/s", "pcie_bw": "128 GB/s"},
    "h200": {"flops_bf16": "1979 TFLOP/s", "flops_fp8": "3958 TFLOP/s", "flops_int8": "3958 TFLOP/s", "hbm": "141 GB",
             "hbm_bw": "4.8 TB/s", "pcie_bw": "128 GB/s"},
}  # fmt: skip


def _digits(text: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3})", "", text)


@pytest.mark.parametrize(("chip", "field"), [(c, f) for c, fields in WRITTEN.items() for f in fields])
def test_each_value_equals_its_sources_figure_or_its_note_gives_that_figure(chip: str, field: str) -> None:
    record = packaged_records()[chip]
    written = WRITTEN[chip][field]
    expected = evaluate_constant(written)
    assert expected is not None
    if record.fields[field].value == pytest.approx(expected.value, rel=1e-9):
        return
    note = _digits(record.notes.get(field, ""))
    assert written.split()[0] in note, f"{chip}.{field} differs from its source's {written}: its note must say so"


def test_v5e_hbm_is_16_gb_as_googles_page_writes_it() -> None:
    assert packaged_records()["tpu_v5e"].fields["hbm"].value == 16e9


def test_v5p_hbm_is_googles_95_gib_and_its_note_gives_the_books_96_gb() -> None:
    record = packaged_records()["tpu_v5p"]
    assert record.fields["hbm"].value == 95 * 2**30
    assert "96" in record.notes["hbm"] and "book" in record.notes["hbm"]


def test_margin_hardware_shows_each_note_under_its_value(tmp_path: Path) -> None:
    result = margin("hardware", "tpu_v5p", cwd=tmp_path)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    (hbm,) = [n for n, line in enumerate(lines) if line.split()[:1] == ["hbm"]]
    assert "95 GiB" in lines[hbm]
    assert lines[hbm + 1].strip() == "note: " + packaged_records()["tpu_v5p"].notes["hbm"]
    everything = margin("hardware", cwd=tmp_path).stdout
    for record in packaged_records().values():
        for note in record.notes.values():
            assert f"note: {note}" in everything


def test_docs_list_every_value_source_and_note() -> None:
    text = (ROOT / "docs" / "hardware.md").read_text("utf-8")
    assert catalog_markdown() in text, (
        "run: python -m scaling_core.hardware.reference (and paste it into docs/hardware.md)"
    )
