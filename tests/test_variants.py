"""Deliberately wrong variants of worked problems: each fails at the right line.

Each ``tests/variants/*.md`` marks where a diagnostic must appear with
``<!-- expect: CODE -->`` (or ``# expect: CODE`` in a calc block) on the line
before.  The errors and warnings reported must be exactly those.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scaling_core import Severity, analyze_document

VARIANTS = sorted((Path(__file__).parent / "variants").glob("*.md"))
_EXPECT = re.compile(r"(?:<!--|#)\s*expect:\s*([A-Z]\d{3}(?:\s*,\s*[A-Z]\d{3})*)")


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda p: p.stem)
def test_variant_fails_exactly_where_marked(variant: Path) -> None:
    text = variant.read_text("utf-8")
    expected = set()
    for number, line in enumerate(text.splitlines(), start=1):
        for match in _EXPECT.finditer(line):
            expected |= {(number + 1, code.strip()) for code in match.group(1).split(",")}
    assert expected, "a variant must mark at least one expected diagnostic"
    analysis = analyze_document(text, variant.name)
    found = {(analysis.line(d.span.start), d.code) for d in analysis.diagnostics if d.severity <= Severity.WARNING}
    assert found == expected, [d.message for d in analysis.diagnostics]


def test_errata_messages_name_the_slip() -> None:
    def notes(name: str) -> str:
        text = (Path(__file__).parent / "variants" / name).read_text("utf-8")
        return " ".join(n for d in analyze_document(text).diagnostics for n in d.notes)

    assert "factor of 2" in notes("kv_cache_missing_k_plus_v.md")
    assert "factor of 2" in notes("one_way_vs_bidirectional.md")
    assert "factor of 3600" in notes("flops_per_dollar_3600.md")
    assert "factor of 1000" in notes("unit_slip_1000.md")
