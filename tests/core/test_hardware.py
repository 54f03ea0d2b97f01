"""The packaged hardware catalog is complete, consistent and sourced."""

from __future__ import annotations

import pytest

from scaling_core import Config
from scaling_core.hardware.catalog import DERIVED, FIELDS, REQUIRED, packaged_chips
from scaling_core.hardware.records import chip_problems, hardware_records, packaged_records
from tests.conftest import run

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
