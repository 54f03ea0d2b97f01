"""The calc-language fuzzer: generated drafts never crash the engine, and analyse the same way twice.

A short run is part of the default test run; run it long by hand after changing the engine:
``MARGIN_HYPOTHESIS_EXAMPLES=100000 pytest tests/fuzz -p no:cacheprovider``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core import Config
from tests.fuzz.calc_grammar import PRELUDE, documents, statements
from tests.fuzz.properties import assert_incremental_equals_full, assert_sound, examples

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
#: Sweeps small enough that the element budget of an analysis is met by generated drafts too.
_SMALL_SWEEPS = Config(max_array_elements=64)
_LATEX = Config(latex_math=True, tolerance=0.0)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=_HEALTH)
@given(statements())
def test_any_statement_in_a_calc_block(statement: str) -> None:
    assert_sound(f"```calc\n{PRELUDE}{statement}\n```\n")


@settings(max_examples=examples(150), deadline=None, suppress_health_check=_HEALTH)
@given(documents(), st.sampled_from((None, _SMALL_SWEEPS, _LATEX)))
def test_any_draft_of_calc_statements_code_spans_and_claims(text: str, config: Config | None) -> None:
    assert_sound(text, config)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=_HEALTH)
@given(documents(), documents())
def test_generated_drafts_analyse_incrementally_as_in_full(first: str, second: str) -> None:
    # The second draft keeps most of the first's regions: the cache's reuse is exercised with new neighbours.
    middle = len(first) // 2
    assert_incremental_equals_full([first, first[:middle] + second + first[middle:], second])
