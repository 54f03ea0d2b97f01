"""Hidden calc blocks: one rule, `<!--`, any whitespace, the word `calc`, then a line break."""

from __future__ import annotations

import pytest

from tests.conftest import analyze, codes, statuses


@pytest.mark.parametrize(
    "opener",
    ["<!-- calc\n", "<!--calc\n", "<!--  calc\n", "<!--\ncalc\n", "<!--\r\ncalc\r\n", "<!-- calc  \n", "<!--\tcalc\n"],
    ids=repr,
)
def test_every_spelling_of_the_opener_is_a_calc_block(opener: str) -> None:
    analysis = analyze(f"{opener}x = 2\n-->\n\nIt is 2<!-- = x -->.\n")
    assert statuses(analysis) == ["pass"]
    assert codes(analysis) == []


@pytest.mark.parametrize("comment", ["<!-- calculation notes -->", "<!-- calc x = 1 -->", "<!-- calcs\nx = 1\n-->"])
def test_other_comments_that_start_with_calc_are_left_alone(comment: str) -> None:
    analysis = analyze(f"{comment}\n\nText.\n")
    assert analysis.values == [] and codes(analysis) == []
