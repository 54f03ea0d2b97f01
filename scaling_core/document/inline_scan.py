"""Code spans, comments, hidden calc blocks and prose claims in the raw lines of inline text.

markdown-it-py gives :mod:`scaling_core.document.extract` the block structure;
the text of each paragraph, heading, table or HTML block is scanned here
line for line, so every span is an exact code-point range of the original text
(CRLF included).  :class:`InlineScanner` holds what one scan found
(a :class:`ChunkScan`); the extractor adds the block rules on top of it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from sys import intern

from scaling_core.diagnostics import make_diagnostic
from scaling_core.document.latex import checkable_math
from scaling_core.document.problem_syntax import answer_marks
from scaling_core.document.prose import TRAILING_NUMBER
from scaling_core.document.regions import CalcRegion, ChunkScan, ClaimRegion, CodeSpanRegion, Suppression, may_check
from scaling_core.text import LineIndex, Span

_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.S)
_CLAIM_OP = re.compile(r"\s*(≈|~=|==|<=|>=|≤|≥|<|>|=)")
#: A hidden calc block: ``<!--``, any whitespace (line breaks too), the word ``calc``, then a
#: line break (or the end of the text). ``<!-- calc x = 1 -->`` on one line and
#: ``<!-- calculation notes -->`` are ordinary comments.
_HIDDEN_CALC = re.compile(r"\s*calc[ \t]*(?:\r\n|\r|\n|\Z)")
_PROBLEM_MARK = re.compile(r"\s*problem\s*:\s*(.*?)\s*$", re.S)
_PROBLEM_END = re.compile(r"\s*/problem\s*$")
_MARGIN = re.compile(r"\s*margin\s*:\s*(ignore|off|on)\b\s*(.*?)\s*$", re.S)
#: A comment that holds HTML (``<!-- <b>old</b> -->``, ``<!-- </span> -->``) or starts with an arrow
#: (``<!-- <- check -->``): not a claim, even after a number.
_HTML_COMMENT = re.compile(r"\s*<(?:/?[A-Za-z][^>]*>|!|-)")
_BACKTICKS = re.compile(r"`+")
_CALC_IGNORE = re.compile(r"#\s*margin\s*:\s*ignore\b\s*([\w\s,]*)")
_EMPHASIS_TAIL = re.compile(r"[*_]+$")


@lru_cache(maxsize=16)
def _closing_backticks(count: int) -> re.Pattern[str]:
    """A run of exactly ``count`` backticks (CommonMark: it closes a code span opened by as many)."""
    return re.compile(r"(?<!`)" + "`" * count + r"(?!`)")


def calc_suppressions(lines: tuple[tuple[int, str], ...]) -> list[Suppression]:
    """The ``# margin: ignore`` suppressions on a calc block's (offset, text) lines."""
    found = []
    for offset, line in lines:
        if "margin" in line and (match := _CALC_IGNORE.search(line)) is not None:
            codes = frozenset(re.split(r"[\s,]+", match.group(1).strip())) - {""}
            span = Span(offset + match.start(), offset + len(line))
            found.append(Suppression(span, codes or None, offset, offset + len(line)))
    return found


class InlineScanner:
    """What one scan of a text found, and the scan of its inline regions (given by line ranges)."""

    def __init__(self, text: str, index: LineIndex, latex_math: bool = False) -> None:
        self.text = text
        #: Whether LaTeX math is looked for (the ``latex_math`` setting).  Without it math is never read,
        #: so none is kept: on the bench's book-like draft, whose prose has math, 3-5% of an analysis's
        #: time, and ~18 MB of a 20 MB draft's.
        self.latex_math = latex_math
        #: Whether the text has a carriage return anywhere (asked once per scan: asking per block was quadratic).
        self.has_cr = "\r" in text
        self.index = index
        self.out = ChunkScan()
        self.scanned: set[tuple[int, int]] = set()

    def line_offset(self, line: int) -> int:
        """Where line ``line`` starts (the text's length past the last line)."""
        starts = self.index.line_starts
        return starts[line] if line < len(starts) else len(self.text)

    def calc_region(self, region: CalcRegion) -> None:
        """Keep a calc block and the ``# margin: ignore`` suppressions on its lines."""
        self.out.regions.append(region)
        if type(region.content) is not str or "margin" in region.content:
            self.out.calc_suppressions += calc_suppressions(region.lines)

    # -- inline text and comments ---------------------------------------------
    def scan_inline(self, first: int, last: int) -> None:
        """Scan lines ``first`` to ``last`` (exclusive) of inline text, once: code spans, math, comments, answers."""
        if (first, last) in self.scanned:
            return
        self.scanned.add((first, last))
        start = self.line_offset(first)
        end = self.index.line_end(last - 1)
        chunk = self.text[start:end]
        answers = "details" in chunk
        math = self.latex_math and ("$" in chunk or "\\(" in chunk or "\\[" in chunk)  # LaTeX math (latex.py)
        if "`" not in chunk and "<!--" not in chunk:
            if answers:
                self.out.answer_marks += answer_marks(chunk, start)
            if math:
                self.out.regions += checkable_math(chunk, start)
            return
        code_spans = self.code_spans(chunk, start)
        masked = _mask(chunk, code_spans)
        if math:
            self.out.regions += checkable_math(masked, start)
        for match in _COMMENT.finditer(masked):
            self.comment(match, chunk, start)
        if answers:
            self.out.answer_marks += answer_marks(_COMMENT.sub(lambda m: " " * len(m.group()), masked), start)

    def code_spans(self, chunk: str, base: int) -> list[tuple[int, int]]:
        """Where the one-line code spans of ``chunk`` (at offset ``base``) are in it; those that may be checked
        are kept as regions."""
        found: list[tuple[int, int]] = []
        regions = self.out.regions
        position = 0
        while True:
            start = chunk.find("`", position)
            if start < 0:
                return found
            if chunk.startswith("``", start):  # a longer run opens: it is closed by a run as long
                opener = _BACKTICKS.match(chunk, start)
                assert opener is not None
                opened = opener.end()
                closer = _closing_backticks(opened - start).search(chunk, opened)
                if closer is None:
                    position = opened
                    continue
                closed, after = closer.start(), closer.end()
            else:  # one backtick, closed by the next lone backtick (the commonest by far: no pattern)
                opened = start + 1
                closed = chunk.find("`", opened)
                while closed >= 0 and chunk.startswith("``", closed):  # a longer run closes nothing here
                    run = _BACKTICKS.match(chunk, closed)
                    assert run is not None
                    closed = chunk.find("`", run.end())
                if closed < 0:
                    position = opened
                    continue
                after = closed + 1
            content = chunk[opened:closed]
            stripped = content.strip(" ")
            if stripped and "\n" not in content and "\r" not in content:
                role = start >= 6 and chunk.startswith("{calc}", start - 6)  # O(1): paragraphs can be long
                begin = start - 6 if role else start
                found.append((begin, after))
                if role or may_check(stripped):
                    regions.append(
                        CodeSpanRegion(
                            base + begin,
                            after - begin,
                            opened + len(content) - len(content.lstrip(" ")) - begin,
                            stripped,
                            role,
                        )
                    )
            position = after

    def comment(self, match: re.Match[str], chunk: str, base: int) -> None:
        """An HTML comment: a hidden calc block, a problem or ``margin:`` marker, or a claim after a number."""
        body = match.group(1)
        span = Span(base + match.start(), base + match.end())
        body_offset = base + match.start(1)
        terminated = match.group().endswith("-->")
        if _HIDDEN_CALC.match(body):
            self.hidden_calc(body, body_offset, span, terminated)
            return
        if not terminated:
            return
        if (mark := _PROBLEM_MARK.match(body)) is not None:
            self.out.problem_marks.append(("open", span, mark.group(1) or "problem"))
        elif _PROBLEM_END.match(body):
            self.out.problem_marks.append(("close", span, ""))
        elif (mark := _MARGIN.match(body)) is not None:
            rest = mark.group(2).strip()
            codes = frozenset(re.split(r"[\s,]+", rest)) - {""} if rest else None
            self.out.margin_marks.append((mark.group(1), span, codes))
        elif (op := _CLAIM_OP.match(body)) is not None and not _HTML_COMMENT.match(body):
            self.claim(chunk, match, base, op)

    def hidden_calc(self, body: str, body_offset: int, span: Span, terminated: bool) -> None:
        """A ``<!-- calc`` comment: its lines are a calc block (S002 when it is not closed)."""
        keyword = body.index("calc")
        content_offset = body_offset + keyword + 4
        content = body[keyword + 4 :]
        # Its lines as pairs: the body is read with the paragraph's code spans masked, so it is not the draft's
        # text, which a block's lines kept as one string are (its cache key holds that string: ``region_key``).
        lines = []
        position = 0
        for piece in re.split(r"(\r\n|\r|\n)", content):
            if piece in ("\r\n", "\r", "\n"):
                position += len(piece)
                continue
            lines.append((content_offset + position, piece))
            position += len(piece)
        self.calc_region(CalcRegion(span, tuple(lines), True, -1))
        if not terminated:
            opener = Span(span.start, span.start + 4 + keyword + 4)
            self.out.diagnostics.append(
                make_diagnostic("S002", "unterminated calc comment: add '-->' after the last statement", opener)
            )

    def claim(self, chunk: str, match: re.Match[str], base: int, op: re.Match[str]) -> None:
        """A claim marker (``<!-- ≈ t -->``) and the prose number before it (S004 when there is none)."""
        marker = Span(base + match.start(), base + match.end())
        before = chunk[max(0, match.start() - 120) : match.start()]
        trimmed = _EMPHASIS_TAIL.sub("", before.rstrip(" \t")).rstrip(" \t")
        number = _trailing_number(trimmed)
        if number is None:
            self.out.diagnostics.append(
                make_diagnostic(
                    "S004",
                    "a claim marker must follow the number it checks (e.g. 'about 22 days<!-- ≈ t -->')",
                    marker,
                )
            )
            return
        start_in_chunk = match.start() - len(before) + number.start()
        unit_from = unit_to = -1
        if number.group("unit"):
            unit_from = number.start("unit") - number.start()
            unit_to = max(number.end("unit"), number.end("per")) - number.start()
        start = base + start_in_chunk
        body_from = base + match.start(1) - start  # where the comment's body starts, from the number's start
        claim = ClaimRegion(start, number.group(), unit_from, unit_to, intern(op.group(1)), body_from + op.start(1),
                            match.group(1)[op.end() :], body_from + op.end(), marker.start - start,
                            marker.end - start)  # fmt: skip
        self.out.regions.append(claim)


_LAST_DIGIT = re.compile(r"\d(?=\D*$)")
#: A character no part of a prose number and its unit can be (``TRAILING_NUMBER`` reads digits, signs,
#: separators, an exponent, a suffix, spaces, word characters, ``/`` and ``%``): the number starts after it.
_NOT_IN_A_NUMBER = re.compile(r"[^\w\s\-+−.,×^{}⁰¹²³⁴⁵⁶⁷⁸⁹⁻%/µμ]")


def _trailing_number(text: str) -> re.Match[str] | None:
    """The prose number (with unit) that ends ``text``, searching only near its last digit."""
    last_digit = _LAST_DIGIT.search(text, max(0, len(text) - 48))
    if last_digit is None:
        return None
    # A number with its exponent spans at most ~40 characters before its last digit, and no match
    # holds a character such as the backtick closing a code span before it: the search starts after the
    # last one (each failed try at a digit of `1.97e14` in "`1.97e14` FLOP/s is about 174 µs" cost ~2 µs).
    start = max(0, last_digit.start() - 40)
    for barrier in _NOT_IN_A_NUMBER.finditer(text, start, last_digit.start()):
        start = barrier.end()
    return TRAILING_NUMBER.search(text, start)


def _mask(chunk: str, ranges: list[tuple[int, int]]) -> str:
    if not ranges:
        return chunk
    pieces = []
    position = 0
    for start, end in ranges:
        pieces.append(chunk[position:start])
        pieces.append(" " * (end - start))
        position = end
    pieces.append(chunk[position:])
    return "".join(pieces)
