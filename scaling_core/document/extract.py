"""Find the evaluable regions of a Markdown draft, with exact spans.

markdown-it-py gives the block structure (fences, HTML blocks, headings,
paragraphs, table rows) with line maps; its inline phase is switched off and
this module scans the raw lines of each inline region itself, so every span
is an exact code-point range of the original text (CRLF included).  This is
the only module that knows the surface syntax of SPEC §2.1-2.4.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from markdown_it import MarkdownIt

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.prose import TRAILING_NUMBER
from scaling_core.document.regions import (
    CalcRegion,
    ClaimRegion,
    CodeSpanRegion,
    ProblemRegion,
    PythonRegion,
    Region,
    Suppression,
)
from scaling_core.text import LineIndex, Span

_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.S)
_CLAIM_OP = re.compile(r"\s*(≈|~=|==|<=|>=|≤|≥|<|>|=)")
_PROBLEM_MARK = re.compile(r"\s*problem\s*:\s*(.*?)\s*$", re.S)
_PROBLEM_END = re.compile(r"\s*/problem\s*$")
_MARGIN = re.compile(r"\s*margin\s*:\s*(ignore|off|on)\b\s*(.*?)\s*$", re.S)
_BOLD_PROBLEM = re.compile(r"\*\*((?:Question|Problem|Exercise)(?:\s+[\w.]+)?\s*(?:\[([^\]]*)\])?\s*:?)\s*\*\*")
_BACKTICKS = re.compile(r"`+")
_EMPHASIS_TAIL = re.compile(r"[*_]+$")


@dataclass
class Extraction:
    """Everything found in one draft, in document order."""

    regions: list[Region] = field(default_factory=list)
    problems: list[ProblemRegion] = field(default_factory=list)
    python_blocks: list[PythonRegion] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    # Tables need no rule of their own: a table is then a paragraph, whose raw
    # lines are scanned for code spans and claims like any other.
    parser = MarkdownIt("commonmark")
    parser.disable(["inline", "text_join"])
    return parser


@dataclass
class _ProblemStart:
    offset: int
    title_span: Span
    ident: str
    title: str
    level: int


class _Extractor:
    def __init__(self, text: str, index: LineIndex) -> None:
        self.text = text
        self.index = index
        self.out = Extraction()
        self.scanned: set[tuple[int, int]] = set()
        self.headings: list[tuple[int, int]] = []  # (offset, level)
        self.bold_starts: list[_ProblemStart] = []
        self.explicit_open: list[tuple[Span, str]] = []
        self.off_start: int | None = None

    def line_offset(self, line: int) -> int:
        starts = self.index.line_starts
        return starts[line] if line < len(starts) else len(self.text)

    def run(self) -> Extraction:
        tokens = _block_parser().parse(self.text)
        section_level = 0
        for position, token in enumerate(tokens):
            if token.map is None:
                continue
            first, last = token.map
            if token.type == "heading_open":
                section_level = int(token.tag[1])
                self.headings.append((self.line_offset(first), section_level))
            elif token.type == "fence":
                self.fence(token.info.strip(), first, last, token.markup)
            elif token.type == "html_block":
                self.scan_inline(first, last)
            elif token.type == "inline":
                self.scan_inline(first, last)
                if tokens[position - 1].type == "paragraph_open":
                    self.maybe_problem(first, section_level)
        self.close_problems()
        self.close_suppression_region()
        return self.out

    # -- fenced blocks -------------------------------------------------------
    def fence(self, info: str, first: int, last: int, markup: str) -> None:
        words = info.split()
        if not words or "calc" not in words[:2]:
            return
        open_line = self.index.line_text(first)
        span = Span(self.line_offset(first), self.index.line_end(last - 1))
        closed = last - 1 > first and self.index.line_text(last - 1).lstrip(" >\t").startswith(markup)
        content_end = last - 1 if closed else last
        if words[0] != "calc":
            if words[0] in ("python", "py"):
                column = open_line.find(info)
                start = self.line_offset(first) + max(column, 0)
                self.out.python_blocks.append(PythonRegion(span, Span(start, start + len(info))))
            return
        prefix = len(open_line) - len(open_line.lstrip(" >\t"))
        lines = []
        for line in range(first + 1, content_end):
            raw = self.index.line_text(line)
            strip = min(prefix, len(raw) - len(raw.lstrip(" >\t")))
            lines.append((self.line_offset(line) + strip, raw[strip:]))
        self.out.regions.append(CalcRegion(span, tuple(lines), hidden=False))
        if not closed:
            opener = Span(self.line_offset(first), self.index.line_end(first))
            self.out.diagnostics.append(
                make_diagnostic("S002", f"unterminated calc block: add a closing {markup} line", opener)
            )

    # -- inline text and comments ---------------------------------------------
    def scan_inline(self, first: int, last: int) -> None:
        if (first, last) in self.scanned:
            return
        self.scanned.add((first, last))
        start = self.line_offset(first)
        end = self.index.line_end(last - 1)
        chunk = self.text[start:end]
        if "`" not in chunk and "<!--" not in chunk:
            return
        code_spans = self.code_spans(chunk, start)
        masked = _mask(chunk, [(s.span.start - start, s.span.end - start) for s in code_spans])
        for match in _COMMENT.finditer(masked):
            self.comment(match, chunk, start)

    def code_spans(self, chunk: str, base: int) -> list[CodeSpanRegion]:
        found: list[CodeSpanRegion] = []
        position = 0
        while True:
            opener = _BACKTICKS.search(chunk, position)
            if opener is None:
                return found
            ticks = opener.group()
            closer = re.compile(r"(?<!`)" + ticks + r"(?!`)").search(chunk, opener.end())
            if closer is None:
                position = opener.end()
                continue
            content = chunk[opener.end() : closer.start()]
            role = chunk[: opener.start()].endswith("{calc}")
            lead = len(content) - len(content.lstrip(" "))
            stripped = content.strip(" ")
            if "\n" not in content and "\r" not in content and stripped:
                outer_start = opener.start() - (6 if role else 0)
                content_start = base + opener.end() + lead
                span = CodeSpanRegion(
                    Span(base + outer_start, base + closer.end()),
                    Span(content_start, content_start + len(stripped)),
                    stripped,
                    role,
                )
                found.append(span)
                self.out.regions.append(span)
            position = closer.end()

    def comment(self, match: re.Match[str], chunk: str, base: int) -> None:
        body = match.group(1)
        span = Span(base + match.start(), base + match.end())
        body_offset = base + match.start(1)
        terminated = match.group().endswith("-->")
        if body.startswith(" calc") or body.startswith("calc") or body.startswith("\ncalc"):
            self.hidden_calc(body, body_offset, span, terminated)
            return
        if not terminated:
            return
        if (mark := _PROBLEM_MARK.match(body)) is not None:
            self.explicit_open.append((span, mark.group(1) or "problem"))
        elif _PROBLEM_END.match(body):
            self.explicit_close(span)
        elif (mark := _MARGIN.match(body)) is not None:
            self.margin_directive(mark.group(1), mark.group(2), span)
        elif (op := _CLAIM_OP.match(body)) is not None and not body.lstrip().startswith("<"):
            self.claim(chunk, match, base, op)

    def hidden_calc(self, body: str, body_offset: int, span: Span, terminated: bool) -> None:
        keyword = body.index("calc")
        content_offset = body_offset + keyword + 4
        content = body[keyword + 4 :]
        lines = []
        position = 0
        for piece in re.split(r"(\r\n|\r|\n)", content):
            if piece in ("\r\n", "\r", "\n"):
                position += len(piece)
                continue
            lines.append((content_offset + position, piece))
            position += len(piece)
        self.out.regions.append(CalcRegion(span, tuple(lines), hidden=True))
        if not terminated:
            opener = Span(span.start, span.start + 4 + keyword + 4)
            self.out.diagnostics.append(
                make_diagnostic("S002", "unterminated calc comment: add '-->' after the last statement", opener)
            )

    def claim(self, chunk: str, match: re.Match[str], base: int, op: re.Match[str]) -> None:
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
        number_span = Span(base + start_in_chunk, base + start_in_chunk + len(number.group()))
        unit_span = None
        if number.group("unit"):
            unit_start = base + start_in_chunk + number.start("unit") - number.start()
            unit_end = base + start_in_chunk + max(number.end("unit"), number.end("per")) - number.start()
            unit_span = Span(unit_start, unit_end)
        body_offset = base + match.start(1)
        expr_offset = body_offset + op.end()
        expr_text = match.group(1)[op.end() :]
        self.out.regions.append(
            ClaimRegion(
                number_span,
                number.group(),
                number.group("unit") or "",
                unit_span,
                op.group(1),
                Span(body_offset + op.start(1), body_offset + op.end(1)),
                expr_text,
                expr_offset,
                marker,
            )
        )

    # -- suppressions --------------------------------------------------------
    def margin_directive(self, verb: str, rest: str, span: Span) -> None:
        if verb == "off":
            self.off_start = span.start if self.off_start is None else self.off_start
            return
        if verb == "on":
            self.close_suppression_region(span.end)
            return
        codes = frozenset(re.split(r"[\s,]+", rest.strip())) - {""} if rest.strip() else None
        line, _ = self.index.position(span.end)
        start = self.index.offset(line + 1, 0)
        end = self.index.line_end(line + 1) if line + 1 < self.index.line_count else start
        self.out.suppressions.append(Suppression(span, codes, start, end))

    def close_suppression_region(self, end: int | None = None) -> None:
        if self.off_start is not None:
            stop = len(self.text) if end is None else end
            self.out.suppressions.append(Suppression(Span(self.off_start, stop), None, self.off_start, stop))
            self.off_start = None

    # -- problems ------------------------------------------------------------
    def maybe_problem(self, line: int, level: int) -> None:
        start = self.line_offset(line)
        raw = self.index.line_text(line)
        stripped = raw.lstrip(" >\t")
        head = _BOLD_PROBLEM.match(stripped)
        if head is None:
            return
        column = len(raw) - len(stripped)
        title_span = Span(start + column, start + column + head.end())
        label = head.group(1).rstrip(": ")
        ident = label.split("[")[0].strip()
        title = (head.group(2) or "").strip() or ident
        self.bold_starts.append(_ProblemStart(start, title_span, ident, title, level))

    def explicit_close(self, span: Span) -> None:
        if not self.explicit_open:
            self.out.diagnostics.append(
                make_diagnostic("P003", "'<!-- /problem -->' without an opening '<!-- problem: id -->'", span)
            )
            return
        opener, ident = self.explicit_open.pop()
        self.out.problems.append(ProblemRegion(Span(opener.start, span.end), opener, ident, ident))

    def close_problems(self) -> None:
        for opener, ident in self.explicit_open:
            self.out.diagnostics.append(
                make_diagnostic("P003", f"problem '{ident}' is never closed: add '<!-- /problem -->'", opener)
            )
        explicit = list(self.out.problems)
        for number, start in enumerate(self.bold_starts):
            if any(p.span.contains(start.offset) for p in explicit):
                continue
            end = len(self.text)
            if number + 1 < len(self.bold_starts):
                end = self.bold_starts[number + 1].offset
            for offset, level in self.headings:
                if offset > start.offset and level <= max(start.level, 1):
                    end = min(end, offset)
                    break
            for other in explicit:
                if other.span.start > start.offset:
                    end = min(end, other.span.start)
            self.out.problems.append(ProblemRegion(Span(start.offset, end), start.title_span, start.ident, start.title))
        self.out.problems.sort(key=lambda p: p.span.start)


_LAST_DIGIT = re.compile(r"\d(?=\D*$)")


def _trailing_number(text: str) -> re.Match[str] | None:
    """The prose number (with unit) that ends ``text``, searching only near its last digit."""
    last_digit = _LAST_DIGIT.search(text, max(0, len(text) - 48))
    if last_digit is None:
        return None
    # A number with its exponent spans at most ~40 characters before its last digit.
    return TRAILING_NUMBER.search(text, max(0, last_digit.start() - 40))


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


def extract(text: str, index: LineIndex | None = None) -> Extraction:
    """Find calc blocks, code spans, claims, problems and suppressions in ``text``."""
    extraction = _Extractor(text, index or LineIndex(text)).run()
    extraction.regions.sort(key=lambda region: region.span.start if not isinstance(region, ClaimRegion) else region.number_span.start)
    return extraction
