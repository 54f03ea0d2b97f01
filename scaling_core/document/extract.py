"""Find the evaluable regions of a Markdown draft, with exact spans.

markdown-it-py gives the block structure (fences, HTML blocks, headings,
paragraphs, table rows) with line maps; its inline phase is switched off and
this module scans the raw lines of each inline region itself, so every span
is an exact code-point range of the original text (CRLF included).  This is
the only module that knows the surface syntax of docs/syntax.md (calc blocks,
code spans, inline values, prose claims, problems, suppressions).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from itertools import accumulate

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from scaling_core.diagnostics import make_diagnostic
from scaling_core.document.chunks import finalize, html_block_is_open, split_chunks
from scaling_core.document.incremental import ChunkCache
from scaling_core.document.latex import find_math
from scaling_core.document.problem_syntax import (
    answer_marks,
    bold_problem,
    directive,
    directive_options,
    exercise,
    reads_body,
)
from scaling_core.document.prose import TRAILING_NUMBER
from scaling_core.document.regions import (
    CalcRegion,
    ChunkScan,
    ClaimRegion,
    CodeSpanRegion,
    Extraction,
    PythonRegion,
    Region,
    Suppression,
)
from scaling_core.document.shift import shift_regions
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


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    # Tables need no rule of their own: a table is then a paragraph, whose raw
    # lines are scanned for code spans and claims like any other.  MyST's colon
    # fences (``:::{note}``) are blocks like backtick fences; YAML front matter is
    # skipped (CommonMark would read its closing ``---`` as a heading underline).
    parser = MarkdownIt("commonmark").use(colon_fence_plugin).use(front_matter_plugin)
    parser.disable(["inline", "text_join"])
    return parser


class _Extractor:
    def __init__(self, text: str, index: LineIndex) -> None:
        self.text = text
        self.index = index
        self.out = ChunkScan()
        self.scanned: set[tuple[int, int]] = set()

    def line_offset(self, line: int) -> int:
        starts = self.index.line_starts
        return starts[line] if line < len(starts) else len(self.text)

    def run(self) -> ChunkScan:
        # Level -1: the section level is not known yet (a heading in an earlier chunk decides it, see chunks.py).
        self.walk(_block_parser().parse(self.text), 0, -1, top=True)
        self.out.regions.sort(key=_region_start)
        return self.out

    def walk(self, tokens: list[Token], shift: int, section_level: int, *, top: bool) -> None:
        """Read block tokens whose line 0 is line ``shift`` (``top``: not in a directive's body)."""
        for position, token in enumerate(tokens):
            if token.map is None:
                continue
            first, last = token.map[0] + shift, token.map[1] + shift
            if token.type == "heading_open":
                section_level = int(token.tag[1])
                if top:
                    self.out.headings.append((self.line_offset(first), section_level))
            elif token.type == "fence":
                self.fence(token.info.strip(), first, last, token.markup, section_level)
                if top and not self.fence_closed(first, last, token.markup):
                    self.out.open_at_end = True
            elif token.type == "colon_fence":
                self.colon_fence(token.info.strip(), first, last, token.markup, section_level)
                if top and not self.fence_closed(first, last, token.markup):
                    self.out.open_at_end = True
            elif token.type == "html_block":
                self.scan_inline(first, last)
                if top and html_block_is_open(token.content):
                    self.out.open_at_end = True
            elif token.type == "inline":
                self.scan_inline(first, last)
                if tokens[position - 1].type == "paragraph_open":
                    problem = bold_problem(self.index.line_text(first), self.line_offset(first), section_level)
                    if problem is not None:
                        self.out.bold_starts.append(problem)

    # -- fenced blocks -------------------------------------------------------
    def fence_closed(self, first: int, last: int, markup: str) -> bool:
        """Whether a fence has its closing line (markdown-it runs an open one to the end)."""
        closing = self.index.line_text(last - 1).lstrip(" >\t").rstrip()
        return last - 1 > first and closing.startswith(markup) and closing.strip(markup[0]) == ""

    def fence(self, info: str, first: int, last: int, markup: str, section_level: int) -> None:
        named = directive(info)
        if named is not None and named[0] != "calc":
            self.directive(*named, first, last, markup, section_level)
            return
        words = ["calc"] if named is not None else info.split()
        if not words or "calc" not in words[:2]:
            return
        open_line = self.index.line_text(first)
        span = Span(self.line_offset(first), self.index.line_end(last - 1))
        closed = self.fence_closed(first, last, markup)
        content_end = last - 1 if closed else last
        if words[0] != "calc":
            if words[0] in ("python", "py"):
                column = open_line.find(info)
                start = self.line_offset(first) + max(column, 0)
                self.out.python_blocks.append(PythonRegion(span, Span(start, start + len(info))))
            return
        prefix = len(open_line) - len(open_line.lstrip(" >\t"))
        lines = []
        body_start = first + 1
        if named is not None:  # a ``{calc}`` directive: its option lines (``:label: x``) are not statements
            body_start += directive_options([self.index.line_text(n) for n in range(first + 1, content_end)])
        if prefix == 0 and body_start < content_end and "\r" not in self.text:  # the common case, written out fast
            begin = self.line_offset(body_start)
            rows = self.text[begin : self.index.line_end(content_end - 1)].split("\n")
            lines = list(zip(accumulate(map((1).__add__, map(len, rows)), initial=begin), rows))
        for line in range(body_start, content_end) if not lines else ():
            raw = self.index.line_text(line)
            strip = min(prefix, len(raw) - len(raw.lstrip(" >\t")))
            lines.append((self.line_offset(line) + strip, raw[strip:]))
        self.calc_region(CalcRegion(span, tuple(lines), hidden=False))
        if not closed:
            opener = Span(self.line_offset(first), self.index.line_end(first))
            self.out.diagnostics.append(
                make_diagnostic("S002", f"unterminated calc block: add a closing {markup} line", opener)
            )

    def calc_region(self, region: CalcRegion) -> None:
        """Keep a calc block and the ``# margin: ignore`` suppressions on its lines."""
        self.out.regions.append(region)
        for offset, line in region.lines:
            if "margin" in line and (match := _CALC_IGNORE.search(line)) is not None:
                codes = frozenset(re.split(r"[\s,]+", match.group(1).strip())) - {""}
                span = Span(offset + match.start(), offset + len(line))
                self.out.calc_suppressions.append(Suppression(span, codes or None, offset, offset + len(line)))

    def colon_fence(self, info: str, first: int, last: int, markup: str, level: int) -> None:
        """A MyST colon fence (``:::{note}``): a directive like its backtick form; quoted or indented, plain text."""
        opener = self.index.line_text(first)
        if len(opener) - len(opener.lstrip(" ")) > 3 or opener.lstrip().startswith(">"):
            self.scan_inline(first, last)  # read as the paragraph CommonMark makes of it
            return
        named = directive(info)
        if named is not None and named[0] == "calc":
            self.fence(info, first, last, markup, level)
        else:
            self.directive(*(named or ("", info)), first, last, markup, level)

    def directive(self, name: str, argument: str, first: int, last: int, markup: str, level: int) -> None:
        """A MyST directive fence: its body is read like any text; ``{exercise}`` and ``{solution}`` make problems."""
        opener = self.index.line_text(first)
        indent = len(opener) - len(opener.lstrip(" "))
        if indent > 3 or opener.lstrip().startswith(">"):
            return  # indented or quoted: its body is not read
        closed = self.fence_closed(first, last, markup)
        content_end = last - 1 if closed else last
        start = self.line_offset(first)
        if name == "exercise":
            body = [self.index.line_text(line) for line in range(first + 1, content_end)]
            title_span = Span(start + indent, start + len(opener.rstrip()))
            self.out.bold_starts.append(exercise(argument, body, start, title_span, level))
        elif name == "solution":
            self.out.answer_marks.append((True, start))
        if reads_body(name) and content_end > first + 1:
            body_text = self.text[self.line_offset(first + 1) : self.line_offset(content_end)]
            self.walk(_block_parser().parse(body_text), first + 1, level, top=False)
        if name == "solution" and closed:
            self.out.answer_marks.append((False, self.index.line_end(last - 1)))

    # -- inline text and comments ---------------------------------------------
    def scan_inline(self, first: int, last: int) -> None:
        if (first, last) in self.scanned:
            return
        self.scanned.add((first, last))
        start = self.line_offset(first)
        end = self.index.line_end(last - 1)
        chunk = self.text[start:end]
        answers = "details" in chunk
        math = "$" in chunk or "\\(" in chunk or "\\[" in chunk  # LaTeX math (latex.py)
        if "`" not in chunk and "<!--" not in chunk:
            if answers:
                self.out.answer_marks += answer_marks(chunk, start)
            if math:
                self.out.regions.extend(find_math(chunk, start))
            return
        code_spans = self.code_spans(chunk, start)
        masked = _mask(chunk, [(s.span.start - start, s.span.end - start) for s in code_spans])
        if math:
            self.out.regions.extend(find_math(masked, start))
        for match in _COMMENT.finditer(masked):
            self.comment(match, chunk, start)
        if answers:
            self.out.answer_marks += answer_marks(_COMMENT.sub(lambda m: " " * len(m.group()), masked), start)

    def code_spans(self, chunk: str, base: int) -> list[CodeSpanRegion]:
        found: list[CodeSpanRegion] = []
        position = 0
        while True:
            opener = _BACKTICKS.search(chunk, position)
            if opener is None:
                return found
            closer = _closing_backticks(len(opener.group())).search(chunk, opener.end())
            if closer is None:
                position = opener.end()
                continue
            content = chunk[opener.end() : closer.start()]
            role = opener.start() >= 6 and chunk.startswith(
                "{calc}", opener.start() - 6
            )  # O(1): paragraphs can be long
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
        self.calc_region(CalcRegion(span, tuple(lines), hidden=True))
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
                unit_span,
                op.group(1),
                Span(body_offset + op.start(1), body_offset + op.end(1)),
                expr_text,
                expr_offset,
                marker,
            )
        )


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


def _region_start(region: Region) -> int:
    return region.number_span.start if isinstance(region, ClaimRegion) else region.span.start


def scan_chunk(text: str) -> ChunkScan:
    """Scan one chunk of a document (offsets relative to the chunk)."""
    if len(text) > _LONG_FENCE and text.startswith(("```", "~~~")) and "\r" not in text:
        scan = _lone_fence(text)
        if scan is not None:
            return scan
    return _Extractor(text, LineIndex(text)).run()


#: A chunk longer than this that is one fenced block is read without markdown-it (which reads it line by line).
_LONG_FENCE = 4096
_OPENING_FENCE = re.compile(r"(`{3,}|~{3,})([^\n]*)\n")


def _lone_fence(text: str) -> ChunkScan | None:
    """The scan of a chunk that is one fenced block at column 0 and blank lines, as markdown-it would make it.

    CommonMark: the block ends at the first line of at least as many of the
    opening characters, indented at most three spaces, with only spaces or
    tabs after them; a backtick fence's info string has no backtick.  Any
    other chunk: None.
    """
    opening = _OPENING_FENCE.match(text)
    if opening is None:
        return None
    markup, info = opening.groups()
    if markup[0] == "`" and "`" in info:
        return None
    character = re.escape(markup[0])
    closing = re.compile(rf"^ {{0,3}}{character}{{{len(markup)},}}[ \t]*$", re.M).search(text, opening.end())
    if closing is None or text[closing.end() :].strip():
        return None
    extractor = _Extractor(text, LineIndex(text))
    last = text.count("\n", 0, closing.start()) + 1
    extractor.fence(info.strip(), 0, last, markup, -1)
    extractor.out.regions.sort(key=_region_start)
    return extractor.out


def extract(
    text: str,
    index: LineIndex | None = None,
    cache: ChunkCache | None = None,
    check_stop: Callable[[], None] | None = None,
) -> Extraction:
    """Find calc blocks, code spans, claims, problems and suppressions in ``text``.

    The text is scanned in chunks (see :mod:`chunks`); with a ``cache`` from
    the previous version, unchanged chunks are not parsed again, and their
    regions are placed only when asked (:func:`all_regions`, or the region
    driver chunk by chunk).  ``check_stop`` is called before each chunk is
    parsed and may raise to abandon the work.
    """
    index = index or LineIndex(text)
    if cache is None:
        # One pass needs no chunks; the property test checks that chunked scans agree.
        return finalize([_Extractor(text, index).run()], text, index)
    scans, chunks = [], []
    bounds = [end for _start, end in split_chunks(text)]
    start, next_bound = 0, 0
    while start < len(text):
        while True:
            end = bounds[next_bound]
            chunk = text[start:end]
            scan = cache.get(chunk)
            if scan is None:
                if check_stop is not None:
                    check_stop()
                scan = scan_chunk(chunk)
                cache.put(chunk, scan)
            next_bound += 1
            if not scan.open_at_end or end == len(text):
                break  # otherwise the open block runs on: merge with the next chunk
        if _marked(scan):  # the rest of a scan is only its regions, placed when the driver asks
            scans.append(cache.placed(chunk, start, scan))
        chunks.append((start, scan))
        start = end
    found = finalize(scans, text, index)
    found.chunks = chunks
    return found


def _marked(scan: ChunkScan) -> bool:
    """Whether a chunk holds more than regions: what :func:`finalize` reads in document offsets."""
    return bool(scan.headings or scan.diagnostics or scan.python_blocks or scan.bold_starts or scan.problem_marks
                or scan.margin_marks or scan.answer_marks or scan.calc_suppressions)  # fmt: skip


def all_regions(found: Extraction, cache: ChunkCache | None = None) -> list[Region]:
    """Every region of ``found`` in document offsets (placing those of a chunked extraction, once)."""
    if found.chunks and not found.regions:
        for start, scan in found.chunks:
            found.regions += cache.placed_regions(start, scan) if cache is not None else shift_regions(scan, start)
    return found.regions
