"""A Pygments lexer for Margin's calc language, so ```` ```calc ```` blocks are coloured everywhere.

Registered under the ``pygments.lexers`` entry point (``calc``, ``margin``):
Sphinx, Jupyter Book, MkDocs and any tool that asks Pygments by name find it
once Margin is installed, and ``sphinx-build -W`` no longer stops on
"Pygments lexer name 'calc' is not known".  It colours what the calc
language's own lexer reads (docs/syntax.md): comments, numbers with their
suffixes and superscript exponents, strings, ``import``, checks and
conversions, calls and names.
"""

from __future__ import annotations

from typing import ClassVar

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

#: Check operators and tolerances, conversions, and the arithmetic that authors write.
_OPERATORS = ("≈", "~=", "==", "<=", ">=", "≤", "≥", "<", ">", "±", "+-", "->", "→", "**", "×", "·", "⋅", "÷", "−")


class CalcLexer(RegexLexer):  # type: ignore[misc]  # Pygments ships no type information
    """Margin's calc language (docs/syntax.md)."""

    name = "Margin calc"
    aliases: ClassVar[list[str]] = ["calc", "margin"]
    filenames: ClassVar[list[str]] = []
    mimetypes: ClassVar[list[str]] = ["text/x-margin-calc"]

    tokens: ClassVar[dict[str, list[object]]] = {
        "root": [
            (r"[ \t\f\v\u00a0]+", Whitespace),
            (r"\r\n|\r|\n", Whitespace),
            (r"#.*?$", Comment.Single),
            (r'"[^"\r\n]*"', String.Double),
            (r"\bimport\b", Keyword.Namespace),
            (r"(?:[0-9][0-9_,]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[kKMBT]?(?![\w])", Number.Float),
            (r"(?:[0-9][0-9_,]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", Number.Float),
            (r"⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+", Number.Integer),
            (r"(\w+)(\s*)(\()", bygroups(Name.Function, Whitespace, Punctuation)),
            (r"(\w+)(\s*)(=)(?!=)", bygroups(Name.Variable, Whitespace, Operator)),
            (r"(\.)(\w+)", bygroups(Punctuation, Name.Attribute)),
            (words(_OPERATORS), Operator),
            (r"[=+\-*/^%]", Operator),
            (r"[()\[\],]", Punctuation),
            (r"\w+", Name),
            (r".", Text),
        ]
    }
