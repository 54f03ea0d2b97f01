"""The lexer reads operators without its master pattern (a hot path); the tokens are the pattern's.

Each text is lexed twice, with the operator fast path on and off (off: every
token goes through the master pattern); tokens and diagnostics must be equal.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scaling_core.expr import lexer
from scaling_core.expr.lexer import tokenize

PIECES = ["**", "->", "+-", "~=", "==", "<=", ">=", "~", ".", ".5", "5.", "−", "→", "±", "≈", "≤", "≥", "·", "⋅",
          "×", "÷", "^", "%", ",", "(", ")", "[", "]", "=", "<", ">", "*", "-", "+", "/", "x", "8", "1,024", " ",
          "\n", "#c\n", "⁻¹", "a", "h100", '"s"', '"', "$", "é", "\t", "\r\n"]  # fmt: skip


def both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple, tuple]:
    fast = tokenize(text, 7)
    with monkeypatch.context() as patch:
        patch.setattr(lexer, "_OPERATOR_STARTS", frozenset())
        slow = tokenize(text, 7)
    return fast, slow


def test_every_operator_alone_and_in_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    for first in PIECES:
        for second in PIECES:
            fast, slow = both(f"a{first}{second}1", monkeypatch)
            assert fast == slow, (first, second)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_random_operator_soup(monkeypatch: pytest.MonkeyPatch, pieces: list[str]) -> None:
    fast, slow = both("".join(pieces), monkeypatch)
    assert fast == slow
