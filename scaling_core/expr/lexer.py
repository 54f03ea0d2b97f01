"""The calc-language lexer: text -> tokens plus diagnostics; never raises.

Notation read as authors write it: ``×`` and ``·`` multiply (``·`` also joins
units), ``÷`` divides, ``^`` and ``**`` are powers, ``−`` is minus, ``→`` is
``->``, superscript digits are exponents, ``#`` starts a comment.  A number
may carry a magnitude suffix written against it (``8k``, ``3.48M``, ``70B``,
``15T``); a unit written against it (``188us``) is a separate name token.
A comma between digit groups of three (``1,680``, ``24,576``) is part of the
number, except inside call parentheses and square brackets, where commas
separate arguments (``max(1,000)`` is ``max(1, 0)``); ``x`` between two
numbers multiplies (``4,096 x 6,144``).
Newlines end statements except inside brackets, and a line that starts
``name =`` always starts a statement (one missing ``)`` swallows nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.expr.tokens import Token, TokenKind
from scaling_core.text import Span

MAGNITUDE_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}

_SUPERSCRIPTS = {"⁰": 0, "¹": 1, "²": 2, "³": 3, "⁴": 4, "⁵": 5, "⁶": 6, "⁷": 7, "⁸": 8, "⁹": 9}
#: Every operator as written -> its token kind.
OPERATORS: dict[str, TokenKind] = {
    "**": TokenKind.POWER, "->": TokenKind.ARROW, "+-": TokenKind.PLUSMINUS, "~=": TokenKind.COMPARE,
    "==": TokenKind.COMPARE, "<=": TokenKind.COMPARE, ">=": TokenKind.COMPARE, "≈": TokenKind.COMPARE,
    "≤": TokenKind.COMPARE, "≥": TokenKind.COMPARE, "<": TokenKind.COMPARE, ">": TokenKind.COMPARE,
    "±": TokenKind.PLUSMINUS, "→": TokenKind.ARROW, "=": TokenKind.ASSIGN, "+": TokenKind.PLUS,
    "-": TokenKind.MINUS, "−": TokenKind.MINUS, "*": TokenKind.STAR, "×": TokenKind.STAR,
    "·": TokenKind.MIDDOT, "⋅": TokenKind.MIDDOT, "/": TokenKind.SLASH, "÷": TokenKind.SLASH,
    "^": TokenKind.POWER, "%": TokenKind.PERCENT, ".": TokenKind.DOT, ",": TokenKind.COMMA,
    "(": TokenKind.LPAREN, ")": TokenKind.RPAREN, "[": TokenKind.LBRACKET, "]": TokenKind.RBRACKET,
}  # fmt: skip
_SUPERSCRIPT_CLASS = "".join(_SUPERSCRIPTS)
#: A character that continues a name (superscripts are exponents, not part of names).
NAME_CONTINUES = rf"[^\W{_SUPERSCRIPT_CLASS}]"
#: A name, exactly as the lexer reads one.
IDENTIFIER = rf"[^\W\d{_SUPERSCRIPT_CLASS}]{NAME_CONTINUES}*"
#: A number without its magnitude suffix, and the suffix (a letter not followed by another).
NUMBER = r"(?:[0-9][0-9_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
SUFFIX = r"[kKMBT](?!\w)"
#: An operator: the two-character ones first.
OPERATOR = r"\*\*|->|\+-|~=|==|<=|>=|[≈≤≥<>±→=+\-−*×·⋅/÷^%.,()\[\]]"
# One master pattern, tried at each position; the group that matched names the token.
_TOKEN = re.compile(
    r"(?P<space>[ \t\f\v\u00a0]+)"
    r"|(?P<comment>#[^\r\n]*)"
    r"|(?P<newline>\r\n|\r|\n)"
    rf"|(?P<number>{NUMBER})(?P<suffix>{SUFFIX})?"
    rf"|(?P<super>⁻?[{_SUPERSCRIPT_CLASS}]+)"
    rf"|(?P<ident>{IDENTIFIER})"
    r'|(?P<string>"[^"\r\n]*")'
    rf"|(?P<op>{OPERATOR})"
)
_DEFINITION_START = re.compile(r"[ \t]*[^\W\d]\w*[ \t]*=(?!=)")
#: A number that may take another digit group after a comma (``1`` or ``1,680``), and such a group.
_GROUP_HEAD = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})*")
_GROUP_TAIL = re.compile(r"[0-9]{3}(?:\.[0-9]*)?")
_SEPARATED_DIGITS = re.compile(r"[0-9],[0-9]{3}")
_new_token = tuple.__new__  # NamedTuple construction without keyword handling (hot path)
#: Operators read without the master pattern (hot path): two characters, and one character except ``.``
#: (which may start a number, ``.5``).  The pattern tries the two-character ones first, as here.
_TWO_CHAR_OPERATORS = {op: kind for op, kind in OPERATORS.items() if len(op) == 2}
_ONE_CHAR_OPERATORS = {op: kind for op, kind in OPERATORS.items() if len(op) == 1 and op != "."}
_OPERATOR_STARTS = frozenset(op[0] for op in OPERATORS if op != ".")
_OPENERS = (TokenKind.LPAREN, TokenKind.LBRACKET)
_CLOSERS = (TokenKind.RPAREN, TokenKind.RBRACKET)


def _superscript_value(text: str) -> float:
    """``⁻¹²`` -> -12.0; a run of more digits than a float holds is infinite (the parser and evaluator say so)."""
    digits = "".join(str(_SUPERSCRIPTS[c]) for c in text if c in _SUPERSCRIPTS)
    return -float(digits) if text.startswith("⁻") else float(digits)


def tokenize(text: str, base: int = 0) -> tuple[list[Token], list[Diagnostic]]:
    """Split ``text`` into tokens; spans are offset by ``base`` code points."""
    tokens: list[Token] = []
    diagnostics: list[Diagnostic] = []
    _lex(text, base, tokens, diagnostics, 0)
    tokens.append(Token(TokenKind.EOF, "", Span(base + len(text), base + len(text))))
    return (_join_digit_groups(tokens) if _SEPARATED_DIGITS.search(text) else tokens), diagnostics


def tokenize_lines(
    text: str,
    lines: Sequence[tuple[int, str]],
    end: int,
    *,
    following: int | None = None,
    contiguous: bool | None = None,
) -> tuple[list[Token], list[Diagnostic]]:
    """Tokens of a block of ``text`` given as ``(offset, line)`` pieces, joined as :func:`tokenize` joins lines.

    The pieces may be separated by more than one character (a container
    prefix such as ``> ``, a CR LF line break); each keeps its own offsets.
    A line break ends a statement outside brackets, and a line that starts
    ``name =`` ends any open bracket.  Pieces that are one run of ``text``,
    one line-break character apart, are lexed as that run; the end-of-input
    token then ends the last line, else it sits at ``end``.

    ``lines`` may be the first lines of a longer block (``pieces.py``):
    ``following`` is then where the block's next line starts, a line that
    starts ``name =``; the tokens are those the whole block has for these
    lines, ending with the line break before it.  ``contiguous`` says whether
    the whole block's lines are one run of text (None: ``lines`` decide).
    """
    if not lines:
        return [Token(TokenKind.EOF, "", Span(end, end))], []
    tokens: list[Token] = []
    diagnostics: list[Diagnostic] = []
    if contiguous is None:
        contiguous = all(after[0] == offset + len(line) + 1 for (offset, line), after in zip(lines, lines[1:]))
    if contiguous and following is None:
        first = lines[0][0]
        return tokenize(text[first : lines[-1][0] + len(lines[-1][1])], first)
    if contiguous and following is not None:
        first = lines[0][0]
        run = text[first:following]  # with the line break before the next line
        if _lex(run, first, tokens, diagnostics, 0) and tokens and tokens[-1].kind is not TokenKind.NEWLINE:
            # The next line starts a definition: the whole block's lexer ends the open bracket at this break.
            tokens.append(Token(TokenKind.NEWLINE, "\n", Span(following - 1, following)))
        tokens.append(Token(TokenKind.EOF, "", Span(following, following)))
        return (_join_digit_groups(tokens) if _SEPARATED_DIGITS.search(run) else tokens), diagnostics
    depth = 0
    for offset, line in lines:
        if depth and _starts_definition(line, 0):
            depth = 0  # an unclosed bracket must not swallow the next definition
        if depth == 0 and tokens and tokens[-1].kind is not TokenKind.NEWLINE:
            tokens.append(Token(TokenKind.NEWLINE, "\n", Span(offset, offset)))
        depth = _lex(line, offset, tokens, diagnostics, depth)
    if following is not None and tokens and tokens[-1].kind is not TokenKind.NEWLINE:
        tokens.append(Token(TokenKind.NEWLINE, "\n", Span(following, following)))  # the next line starts a definition
    tokens.append(Token(TokenKind.EOF, "", Span(end, end)))
    separated = any(_SEPARATED_DIGITS.search(line) for _, line in lines)
    return (_join_digit_groups(tokens) if separated else tokens), diagnostics


def _starts_definition(text: str, pos: int) -> bool:
    """Whether the line at ``pos`` starts ``name =``: such a line always starts a statement."""
    return _DEFINITION_START.match(text, pos) is not None


def _lex(text: str, base: int, tokens: list[Token], diagnostics: list[Diagnostic], depth: int) -> int:
    """Append ``text``'s tokens (no end-of-input token); ``depth`` is the bracket depth before and after."""
    pos = 0
    spaced = True
    length = len(text)
    match_token = _TOKEN.match
    new = _new_token
    while pos < length:
        char = text[pos]
        if char == " ":  # the commonest separator, skipped without a regex match (hot path)
            pos += 1
            spaced = True
            continue
        if char in _OPERATOR_STARTS:  # an operator, read without a regex match (hot path)
            op = text[pos : pos + 2]
            token_kind = _TWO_CHAR_OPERATORS.get(op)
            if token_kind is None:
                op = char
                token_kind = _ONE_CHAR_OPERATORS.get(char)
            if token_kind is not None:
                end = pos + len(op)
                tokens.append(new(Token, (token_kind, op, new(Span, (base + pos, base + end)), 0.0, "", spaced)))
                if token_kind in _OPENERS:
                    depth += 1
                elif token_kind in _CLOSERS:
                    depth = max(depth - 1, 0)
                spaced = False
                pos = end
                continue
        match = match_token(text, pos)
        if match is None:
            pos = _bad_character(text, pos, base, diagnostics)
            spaced = False
            continue
        kind = match.lastgroup
        end = match.end()
        if kind == "space":
            spaced = True
        elif kind == "ident":  # the commonest tokens are built inline (hot path)
            tokens.append(
                new(Token, (TokenKind.IDENT, match.group(), new(Span, (base + pos, base + end)), 0.0, "", spaced))
            )
            spaced = False
        elif kind == "number":  # a number without a magnitude suffix
            text_ = match.group()
            value = float(text_.replace("_", "")) if "_" in text_ else float(text_)
            if tokens and tokens[-1].text == "x":
                _times_between_numbers(tokens)
            tokens.append(new(Token, (TokenKind.NUMBER, text_, new(Span, (base + pos, base + end)), value, "", spaced)))
            spaced = False
        elif kind == "op":
            op = match.group()
            token_kind = OPERATORS[op]
            tokens.append(new(Token, (token_kind, op, new(Span, (base + pos, base + end)), 0.0, "", spaced)))
            if token_kind in _OPENERS:
                depth += 1
            elif token_kind in _CLOSERS:
                depth = max(depth - 1, 0)
            spaced = False
        elif kind == "comment":
            spaced = True
        elif kind == "newline":
            if depth and _starts_definition(text, end):
                depth = 0  # an unclosed bracket must not swallow the next definition
            if depth == 0 and tokens and tokens[-1].kind is not TokenKind.NEWLINE:
                tokens.append(Token(TokenKind.NEWLINE, "\n", Span(base + pos, base + end)))
            spaced = True
        else:
            if kind == "suffix":  # the number group ends where its suffix starts
                kind = "number"
            token = _make_token(kind, match, base, spaced)  # type: ignore[arg-type]  # a suffixed number, superscript or string
            if token.kind in _OPENERS:
                depth += 1
            elif token.kind in _CLOSERS:
                depth = max(depth - 1, 0)
            elif token.kind is TokenKind.NUMBER:
                _times_between_numbers(tokens)
            tokens.append(token)
            spaced = False
        pos = end
    return depth


def _times_between_numbers(tokens: list[Token]) -> None:
    """Before a number: read a name ``x`` right after another number as ``*`` (``8 x 128``).

    ``8 x`` followed by a number was never valid otherwise (``x`` is no unit), so a name ``x`` keeps its meaning.
    """
    if len(tokens) > 1:
        sign = tokens[-1]
        if sign.text == "x" and sign.kind is TokenKind.IDENT and tokens[-2].kind is TokenKind.NUMBER:
            tokens[-1] = Token(TokenKind.STAR, "x", sign.span, spaced=sign.spaced)


def _join_digit_groups(tokens: list[Token]) -> list[Token]:
    """Join a number written with thousands separators (``50,331,648``) into one number token.

    Only digit groups of exactly three, with no space around the comma, and
    never inside call parentheses or square brackets (shapes, lists), where a
    comma separates arguments: ``f(1,000)`` is ``f(1, 0)``, ``bf16[8,128]`` a 2-D shape.
    """
    joined: list[Token] = []
    separates: list[bool] = []  # per open bracket: whether a comma there separates arguments
    for token in tokens:
        kind = token.kind
        if kind is TokenKind.NEWLINE:
            separates.clear()  # a statement ends: so do its brackets (the lexer emits no newline inside one)
        elif kind is TokenKind.LPAREN:
            separates.append(bool(joined) and joined[-1].kind is TokenKind.IDENT)
        elif kind is TokenKind.LBRACKET:
            separates.append(True)
        elif kind in _CLOSERS:
            if separates:
                separates.pop()
        elif (
            kind is TokenKind.NUMBER
            and not token.spaced
            and len(joined) > 1
            and joined[-1].kind is TokenKind.COMMA
            and not joined[-1].spaced
            and joined[-2].kind is TokenKind.NUMBER
            and not (separates and separates[-1])
            and _GROUP_TAIL.fullmatch(token.text)
            and _GROUP_HEAD.fullmatch(joined[-2].text)
        ):
            head = joined[-2]
            text = f"{head.text},{token.text}"
            span = Span(head.span.start, token.span.end)
            joined[-2:] = [Token(TokenKind.NUMBER, text, span, float(text.replace(",", "")), spaced=head.spaced)]
            continue
        joined.append(token)
    return joined


def _make_token(kind: str, match: re.Match[str], base: int, spaced: bool) -> Token:
    text = match.group()
    start, end = match.span()
    span = _new_token(Span, (base + start, base + end))
    if kind == "number":
        value = float(match.group("number").replace("_", ""))
        suffix = match.group("suffix") or ""
        if suffix:
            value *= MAGNITUDE_SUFFIXES[suffix]
        return _new_token(Token, (TokenKind.NUMBER, text, span, value, suffix, spaced))
    if kind == "super":
        return Token(TokenKind.SUPERSCRIPT, text, span, _superscript_value(text), spaced=spaced)
    return Token(TokenKind.STRING, text[1:-1], span, spaced=spaced)


def _bad_character(text: str, pos: int, base: int, diagnostics: list[Diagnostic]) -> int:
    char = text[pos]
    if char == '"':
        stop = len(text)
        for breaker in "\r\n":
            found = text.find(breaker, pos)
            if found >= 0:
                stop = min(stop, found)
        diagnostics.append(
            make_diagnostic("S001", "unterminated string: add a closing '\"'", Span(base + pos, base + stop))
        )
        return stop
    diagnostics.append(
        make_diagnostic(
            "S003",
            f"invalid character {char!r} (U+{ord(char):04X}) in a calc statement",
            Span(base + pos, base + pos + 1),
        )
    )
    return pos + 1
