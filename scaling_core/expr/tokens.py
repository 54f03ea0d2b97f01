"""Token kinds and tokens of the calc language."""

from __future__ import annotations

import enum
from typing import NamedTuple

from scaling_core.text import Span


class TokenKind(enum.Enum):
    """Every kind of token the lexer produces."""

    NUMBER = "number"
    IDENT = "name"
    STRING = "string"
    PERCENT = "%"
    SUPERSCRIPT = "superscript"
    PLUS = "+"
    MINUS = "-"
    STAR = "*"
    SLASH = "/"
    POWER = "**"
    DOT = "."
    COMMA = ","
    LPAREN = "("
    RPAREN = ")"
    LBRACKET = "["
    RBRACKET = "]"
    ASSIGN = "="
    ARROW = "->"
    COMPARE = "comparison"
    PLUSMINUS = "±"
    MIDDOT = "·"
    NEWLINE = "end of line"
    EOF = "end of input"


class Token(NamedTuple):
    """A token with its exact span; ``value`` holds a number's magnitude."""

    kind: TokenKind
    text: str
    span: Span
    value: float = 0.0
    #: For numbers: the magnitude-suffix letter (k, M, B, T) if one was attached.
    suffix: str = ""
    #: Whether whitespace separates this token from the previous one.
    spaced: bool = True


#: Comparison operators as written -> their one meaning (``~=`` is ``≈``, ``<=`` is ``≤``, ``>=`` is ``≥``).
_COMPARISON_ALIASES = {"~=": "≈", "<=": "≤", ">=": "≥"}


def canonical_comparison(op: str) -> str:
    """The canonical form of a comparison operator: ``≈``, ``≤``, ``≥`` for their ASCII spellings, else ``op``."""
    return _COMPARISON_ALIASES.get(op, op)


#: Relations that join the links of a code span's chain (``expr/chain.py``), as written -> ``=`` or ``≈``.
CHAIN_JOINS = {"=": "=", "≈": "≈", "~=": "≈", "~": "≈"}
