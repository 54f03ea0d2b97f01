"""The documentation promises what the code does."""

from __future__ import annotations

import dataclasses
import re

from scaling_core import CODES, Config
from tests.conftest import ROOT


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_has_exactly_two_commands_and_ci_runs_the_test_one() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert "margin check examples/" in commands[0]
    assert "pytest" in commands[1]
    assert commands[1] in (ROOT / ".ci" / "run").read_text("utf-8")


def test_every_diagnostic_code_is_documented() -> None:
    text = (ROOT / "docs" / "diagnostics.md").read_text("utf-8")
    documented = set(re.findall(r"^## ([A-Z]\d{3}) ", text, re.M))
    assert documented == set(CODES)


def test_every_setting_is_documented() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    for field in dataclasses.fields(Config):
        assert f"| `{field.name}` |" in text, field.name


def test_formula_reference_is_up_to_date() -> None:
    from scaling_core.formulas.reference import reference_markdown

    current = (ROOT / "docs" / "formulas.md").read_text("utf-8")
    assert current == reference_markdown(), "run: python -m scaling_core.formulas.reference > docs/formulas.md"
