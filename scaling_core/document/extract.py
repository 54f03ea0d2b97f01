"""Find the evaluable regions of a Markdown draft, with exact spans.

markdown-it-py gives the block structure (fences, HTML blocks, headings,
paragraphs, table rows) with line maps; its inline phase is switched off and
the raw lines of each inline region are scanned by :mod:`inline_scan`, so
every span is an exact code-point range of the original text (CRLF
included).  This module and :mod:`inline_scan` are the only ones that know
the surface syntax of docs/syntax.md (calc blocks, code spans, inline
values, prose claims, problems, suppressions).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from functools import lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING

from scaling_core.diagnostics import make_diagnostic
from scaling_core.document.chunk_layout import ChunkLayout, Reuse, reuse
from scaling_core.document.chunks import block_starts, cuts_after, finalize, html_block_is_open, split_chunks
from scaling_core.document.effects import region_start
from scaling_core.document.incremental import ChunkCache
from scaling_core.document.inline_scan import InlineScanner
from scaling_core.document.piece_chunks import lone_calc_fence, long_calc_block
from scaling_core.document.pieces import MIN_LINES
from scaling_core.document.problem_syntax import (
    bold_problem,
    directive,
    directive_options,
    exercise,
    reads_body,
)
from scaling_core.document.regions import (
    CalcRegion,
    ChunkScan,
    Extraction,
    PythonRegion,
    Region,
)
from scaling_core.document.shift import shift_regions
from scaling_core.document.simple_blocks import Block, closed_fence, read_segment
from scaling_core.text import LineIndex, Span

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    # Tables need no rule of their own: a table is then a paragraph, whose raw
    # lines are scanned for code spans and claims like any other.  MyST's colon
    # fences (``:::{note}``) are blocks like backtick fences; YAML front matter is
    # skipped (CommonMark would read its closing ``---`` as a heading underline).
    # Imported here: a draft of plain paragraphs, headings, bullet lists and fences never needs
    # markdown-it (simple_blocks.py), and `margin check` starts faster without it.
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    parser = MarkdownIt("commonmark").use(colon_fence_plugin).use(front_matter_plugin)
    parser.disable(["inline", "text_join"])
    return parser


class _Extractor(InlineScanner):
    """One scan of a text: markdown-it's block tokens walked, inline text scanned (:class:`InlineScanner`)."""

    #: Whether plain segments are read without markdown-it (:mod:`simple_blocks`); the property test turns it off.
    simple_blocks = True

    def run(self) -> ChunkScan:
        """Scan the whole text: every region, heading, problem start and marker, in document order."""
        # Level -1: the section level is not known yet (a heading in an earlier chunk decides it, see chunks.py).
        if self.simple_blocks and not self.has_cr:
            self.read_segments(block_starts(self.text))
        else:
            self.walk(_block_parser().parse(self.text), 0, -1, top=True)
        self.out.regions.sort(key=region_start)
        return self.out

    def read_segments(self, starts: list[int]) -> None:
        """Read each segment (``starts``: :func:`block_starts`) as a simple block, runs of the others with markdown-it."""
        level, k, pending, count = -1, 0, -1, len(starts) - 1
        while k < count:
            plan = self.plan_segment(starts, k)
            if plan is None:
                pending = k if pending < 0 else pending
                k += 1
                continue
            if pending >= 0:  # the run before this segment first: an open block in it may reach this one
                resume, level = self.parse_run(starts, pending, k, level)
                pending = -1
                if resume > k:
                    k = resume
                    continue
            k, level = self.read_plan(plan, level)
        if pending >= 0:
            self.parse_run(starts, pending, count, level)

    def plan_segment(self, starts: list[int], k: int) -> _Plan | None:
        """What segment ``k`` holds if it is simple (reading nothing yet), else None."""
        text, start = self.text, starts[k]
        first = bisect.bisect_left(self.index.line_starts, start)
        if text.startswith(("```", "~~~"), start):
            fence = closed_fence(text, start)
            if fence is None:
                return None
            markup, info, end = fence
            after = bisect.bisect_left(starts, end)
            if text[end : starts[after]].strip(" \t\n"):
                return None  # more than blank lines after the closing line: markdown-it reads it
            last = bisect.bisect_right(self.index.line_starts, end)
            return after, first, [("fence", last, 0)], markup, info
        blocks = read_segment(text, start, starts[k + 1])
        return None if blocks is None else (k + 1, first, blocks, "", "")

    def read_plan(self, plan: _Plan, level: int) -> tuple[int, int]:
        """Read a simple segment's blocks: the next segment and the section level after them."""
        after, first, blocks, markup, info = plan
        for kind, line, value in blocks:
            if kind == "fence":
                self.fence(info.strip(), first, line, markup, level)
                continue
            line += first
            if kind == "heading":
                level = value
                self.out.headings.append((self.line_offset(line), level))
                self.scan_inline(line, line + 1)
            else:
                self.scan_inline(line, value + first if kind == "paragraph" else line + 1)
                problem = bold_problem(self.index.line_text(line), self.line_offset(line), level)
                if problem is not None:
                    self.out.bold_starts.append(problem)
        return after, level

    def parse_run(self, starts: list[int], k: int, stop: int, level: int) -> tuple[int, int]:
        """Parse segments ``k`` to ``stop`` with markdown-it, and on while a block in them runs open.

        Returns the segment after the text read and the section level there.
        Each time a block runs open the text read doubles, so the work stays
        linear in the length of the text.
        """
        count = len(starts) - 1
        while True:
            begin, end = starts[k], starts[stop]
            tokens = _block_parser().parse(self.text[begin:end])
            shift = bisect.bisect_left(self.index.line_starts, begin)
            if stop == count or not self.runs_open(tokens, shift):
                break
            stop = max(stop + 1, min(count, bisect.bisect_left(starts, begin + 2 * (end - begin))))
        return stop, self.walk(tokens, shift, level, top=True)

    def runs_open(self, tokens: list[Token], shift: int) -> bool:
        """Whether a fence or an HTML block in ``tokens`` runs to their end (the text after may belong to it)."""
        for token in tokens:
            if token.map is None:
                continue
            if token.type in ("fence", "colon_fence"):
                if not self.fence_closed(token.map[0] + shift, token.map[1] + shift, token.markup):
                    return True
            elif token.type == "html_block" and html_block_is_open(token.content):
                return True
        return False

    def walk(self, tokens: list[Token], shift: int, section_level: int, *, top: bool) -> int:
        """Read block tokens whose line 0 is line ``shift`` (``top``: not in a directive's body); the level after them."""
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
        return section_level

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
        region = None
        if prefix == 0 and body_start < content_end and not self.has_cr:  # the common case, written out fast
            begin = self.line_offset(body_start)
            content = self.text[begin : self.index.line_end(content_end - 1)]
            if content_end - body_start < MIN_LINES:  # kept as written (a long block's lines are read again and
                region = CalcRegion(span, content, False, begin)  # again, so they are kept: ``piece_chunks.py``)
            else:
                rows = content.split("\n")
                lines = list(zip(accumulate(map((1).__add__, map(len, rows)), initial=begin), rows))
        if region is None:
            for line in range(body_start, content_end) if not lines else ():
                raw = self.index.line_text(line)
                strip = min(prefix, len(raw) - len(raw.lstrip(" >\t")))
                lines.append((self.line_offset(line) + strip, raw[strip:]))
            region = CalcRegion(span, tuple(lines), False, -1)
        self.calc_region(region)
        if not closed:
            opener = Span(self.line_offset(first), self.index.line_end(first))
            self.out.diagnostics.append(
                make_diagnostic("S002", f"unterminated calc block: add a closing {markup} line", opener)
            )

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


def scan_chunk(text: str, latex_math: bool = False) -> ChunkScan:
    """Scan one chunk of a document (offsets relative to the chunk); its LaTeX math too with ``latex_math``."""
    if len(text) > _LONG_FENCE and text.startswith(("```", "~~~")) and "\r" not in text:
        if (scan := _lone_fence(text, latex_math)) is not None:
            return scan
    return _Extractor(text, LineIndex(text), latex_math).run()


#: A chunk longer than this that is one fenced block is read without segments (a fence is read without markdown-it).
_LONG_FENCE = 4096
#: A simple segment: the next segment, its first line, its blocks, a fence's marker and info string.
_Plan = tuple[int, int, list[Block], str, str]


def _lone_fence(text: str, latex_math: bool) -> ChunkScan | None:
    """The scan of a chunk that is one fenced block at column 0 and blank lines, as markdown-it would make it."""
    fence = closed_fence(text, 0)
    if fence is None or text[fence[2] :].strip():
        return None
    markup, info, end = fence
    if info.split()[:1] == ["calc"]:
        return lone_calc_fence(text, end)
    extractor = _Extractor(text, LineIndex(text), latex_math)
    extractor.fence(info.strip(), 0, text.count("\n", 0, end) + 1, markup, -1)
    extractor.out.regions.sort(key=region_start)
    return extractor.out


def extract(
    text: str,
    index: LineIndex | None = None,
    cache: ChunkCache | None = None,
    check_stop: Callable[[], None] | None = None,
    *,
    latex_math: bool = False,
) -> Extraction:
    """Find calc blocks, code spans, claims, problems and suppressions in ``text`` (and with ``latex_math``,
    the setting, LaTeX math that may hold a chain: without it math is never read).

    The text is scanned in chunks (see :mod:`chunks`); with a ``cache`` from
    the previous version, unchanged chunks are not parsed again, and their
    regions are placed only when asked (:func:`all_regions`, or the region
    driver chunk by chunk).  ``check_stop`` is called before each chunk is
    parsed and may raise to abandon the work.
    """
    index = index or LineIndex(text)
    if cache is None:
        # One pass needs no chunks; the property test checks that chunked scans agree.
        return finalize([scan := _Extractor(text, index, latex_math).run()], text, index, [(0, scan)])
    if cache.latex_math != latex_math:  # its scans were made the other way
        cache.start_over(latex_math)
    layout = _read_chunks(text, cache, check_stop)
    scans, chunks, walked = [], [], []
    for number, (start, key, scan) in enumerate(zip(layout.starts, layout.keys, layout.scans)):
        if _marked(scan):  # the rest of a scan is only its regions, placed when the driver asks
            scans.append(cache.placed(key, start, scan))
        chunks.append((start, scan))
        pieces = cache.pieces.walked(layout.chunk(number), scan, cache.fresh) if long_calc_block(scan) else None
        if pieces is None:
            walked.append((start, scan))
        else:
            walked += [(start + at, piece) for at, piece in pieces]
    found = finalize(scans, text, index, chunks)
    found.chunks, found.walked = chunks, walked
    return found


def _read_chunks(text: str, cache: ChunkCache, check_stop: Callable[[], None] | None) -> ChunkLayout:
    """The chunks of ``text`` and their scans: those the previous version's layout shows unchanged are kept
    (``chunk_layout.py``), the others cut and looked up in ``cache`` or scanned."""
    kept = reuse(text, cache.layout) if cache.layout is not None else None
    if kept is None:
        layout, start, cuts = ChunkLayout([], [], [], text), 0, iter([end for _s, end in split_chunks(text)])
    else:
        old, head = kept.layout, kept.head
        layout = ChunkLayout(old.starts[:head], old.keys[:head], old.scans[:head], text)
        for begin, key, scan in zip(layout.starts, layout.keys, layout.scans):
            cache.keep(key, text, begin, scan)
        start = kept.start
        cuts = cuts_after(text, start)
    while start < len(text):
        if kept is not None and (same := kept.old_chunk_at(start)) is not None:
            _keep_end(layout, kept, same, cache)  # the unchanged end: its old chunks, moved
            break
        begin = start
        while True:
            end = next(cuts)
            chunk = text[begin:end]  # cut out to be hashed and scanned, then dropped: the cache keeps ``text``
            found = cache.get(chunk, text, begin)
            key = hash(chunk)
            if found is None:
                if check_stop is not None:
                    check_stop()
                found = scan_chunk(chunk, cache.latex_math)
                cache.put(key, text, begin, found)
            scan = found
            if not scan.open_at_end or end == len(text):
                break  # otherwise the open block runs on: merge with the next chunk
        layout.starts.append(begin)
        layout.keys.append(key)
        layout.scans.append(scan)
        start = end
    cache.layout = layout
    return layout


def _keep_end(layout: ChunkLayout, kept: Reuse, first: int, cache: ChunkCache) -> None:
    """Add the old chunks from ``first`` on, ``kept.delta`` further on."""
    old, delta, text = kept.layout, kept.delta, layout.text
    starts = [start + delta for start in old.starts[first:]] if delta else old.starts[first:]
    layout.starts += starts
    layout.keys += old.keys[first:]
    layout.scans += old.scans[first:]
    for start, key, scan in zip(starts, old.keys[first:], old.scans[first:]):
        cache.keep(key, text, start, scan)


def _marked(scan: ChunkScan) -> bool:
    """Whether a chunk holds more than regions and headings: what :func:`finalize` reads in document offsets."""
    return bool(scan.diagnostics or scan.python_blocks or scan.bold_starts or scan.problem_marks
                or scan.margin_marks or scan.answer_marks or scan.calc_suppressions)  # fmt: skip


def all_regions(found: Extraction, cache: ChunkCache | None = None) -> list[Region]:
    """Every region of ``found`` in document offsets (placing those of a chunked extraction, once)."""
    if found.chunks and not found.regions:
        for start, scan in found.chunks:
            found.regions += cache.placed_regions(start, scan) if cache is not None else shift_regions(scan, start)
    return found.regions
