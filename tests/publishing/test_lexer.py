"""The ``calc`` Pygments lexer: found by name through its entry point, and it reads every calc form without errors."""

from __future__ import annotations

from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Error, Name, Number, Operator, String

from margin.pygments_calc import CalcLexer

BLOCK = """import "constants.md"
N = 70e9 param                 # parameters
C = 6 * N * D -> FLOP
t = C / (chips * h100.flops_bf16 * 0.4) → days
t ≈ 22 days ± 5%
bf16[8, 128, 8192].bytes -> MB
x = 3.5×10⁶ · 2 − 1 ÷ 4 ** 2 ^ 2
sweep = [1, 2, 4]; m = max(1,000, 8k)
t <= 30 days
"""


def test_the_lexer_is_found_by_name_once_margin_is_installed() -> None:
    assert isinstance(get_lexer_by_name("calc"), CalcLexer)
    assert isinstance(get_lexer_by_name("margin"), CalcLexer)


def test_every_calc_form_is_read_without_error_tokens() -> None:
    tokens = list(CalcLexer().get_tokens(BLOCK))
    assert "".join(value for _, value in tokens) == BLOCK
    assert not [value for kind, value in tokens if kind in Error]
    kinds = {value: kind for kind, value in tokens}
    assert kinds["# parameters"] in Comment
    assert kinds['"constants.md"'] in String
    assert kinds["70e9"] in Number and kinds["8k"] in Number and kinds["⁶"] in Number
    assert kinds["≈"] in Operator and kinds["->"] in Operator and kinds["±"] in Operator
    assert kinds["max"] in Name.Function and kinds["flops_bf16"] in Name.Attribute and kinds["N"] in Name
