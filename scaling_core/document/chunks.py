"""Chunked extraction: parse only the parts of a document that changed.

A document is split where a new block starts for certain: a line at column
0 after a blank line (a heading, a paragraph, a fence, a list), outside any
fenced block and any HTML comment.  No Markdown block crosses such a line (a
list item's or a quote's continuation is indented or marked, and a paragraph
ends at a blank line), so each chunk parses on its own, and an unchanged
chunk's scan is reused from the cache (``incremental.ChunkCache``).  A
candidate cut inside a fence or an HTML block is noticed from the chunk's own
parse and undone (``extract.py``), so markdown-it alone decides the block
structure.  Two things a chunk cannot know are carried over here: the level
of the section a problem starts in (its heading may be in an earlier chunk),
and YAML front matter, which only the first chunk may hold (no cut inside it,
and none before a ``---`` line, which would read as front matter).
What spans chunks — problem extents, explicit problem markers, ``margin:
off``/``on`` regions, next-line suppressions — is decided by :func:`finalize`.
"""

from __future__ import annotations

import bisect
import math
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import pairwise
from typing import Any

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.regions import ChunkScan, Extraction, ProblemRegion, ProblemStart, Suppression
from scaling_core.text import LineIndex, Span

#: A line at column 0 right after a blank line (not ``---``, which could open front matter): where a chunk may start.
_CANDIDATE = re.compile(r"(?:\n[ \t]*\n|\r\n[ \t]*\r\n|\r[ \t]*\r)(?=[^\s-]|-(?!--))")
#: The same for text with ``\n`` line breaks only (5x faster to search).
_CANDIDATE_LF = re.compile(r"\n[ \t]*\n(?=[^\s-]|-(?!--))")
#: A chunk is cut at a heading, at a candidate whose next line hashes to 0 modulo this (~1 in 4), or
#: once it holds this many characters: a few paragraphs, and a long paragraph on its own.
_CUT_EVERY = 4
_CHUNK_CHARACTERS = 2048
#: Drafts of n times this many characters (n > 1) have chunks about sqrt(n) times as long, headings or not.
_SCALE_CHARACTERS = 400_000
#: A fence this long starts a chunk of its own (``extract.py`` reads such a chunk without markdown-it).
_LONG_BLOCK = 4096
#: The line that closes YAML front matter (``---`` or ``...``), after the opening ``---``.
FRONT_MATTER_END = re.compile(r"(?:\r\n|\r|\n)(?:---|\.\.\.)")
#: HTML blocks of CommonMark types 1-5 run to their own terminator, past blank lines and headings.
_OPEN_HTML = (
    (re.compile(r"\s{0,3}<!--"), "-->"),
    (re.compile(r"\s{0,3}<\?"), "?>"),
    (re.compile(r"\s{0,3}<!\[CDATA\["), "]]>"),
    (re.compile(r"\s{0,3}<![A-Za-z]"), ">"),
)
_OPEN_RAW = re.compile(r"\s{0,3}<(script|pre|style|textarea)(?:\s|>|$)", re.I)


def split_chunks(text: str) -> list[tuple[int, int]]:
    """Candidate chunks: cut before lines at column 0 that follow a blank line.

    Not before every such line: before a heading or a long fence, before a line whose first
    characters hash to 0 modulo :data:`_CUT_EVERY`, and where the chunk
    already holds :data:`_CHUNK_CHARACTERS`.  So a chunk is a few short
    paragraphs or one long one, and where a cut falls depends on the text
    near it only: an edit changes its own chunk (and rarely the next).
    A candidate may cut through a fence or an HTML comment; :func:`extract`
    notices from the chunk's own parse (``ChunkScan.open_at_end``) and merges it
    with the next, so markdown-it alone decides the block structure.
    """
    bounds = [0, *_cuts(text, block_starts(text)[1:], 0), len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a] or [(0, len(text))]


def cuts_after(text: str, start: int) -> Iterator[int]:
    """The chunk starts after ``start``, in order, as :func:`split_chunks` finds them, then ``len(text)``.

    ``start`` must be a chunk start of ``text`` past any front matter, whose
    next candidate :func:`split_chunks` would find in the same place (it decides
    whether a long fence is cut at ``start``): ``chunk_layout.py`` restarts
    cutting there, before an edit, and stops reading once the cuts meet the old ones.
    """
    yield from _cuts(text, _candidates_after(text, start), start)
    yield len(text)


def _candidates_after(text: str, start: int) -> Iterator[int]:
    """As ``block_starts(text)[1:]`` from ``start`` on, read as needed."""
    last = start
    for match in _candidate_pattern(text).finditer(text, start):
        last = match.end()
        yield last
    if last != len(text):
        yield len(text)


def _cuts(text: str, candidates: Iterable[int], last: int) -> Iterator[int]:
    """The candidates (in order, ending with ``len(text)``) that ``split_chunks`` cuts at."""
    # A long draft gets longer chunks (~ the square root of its length): fewer to replay per keystroke.
    scale = chunk_scale(len(text))
    longest, every = _CHUNK_CHARACTERS * scale, _CUT_EVERY * scale
    for at, after in pairwise(candidates):
        if (
            at - last >= longest
            or (scale == 1 and text.startswith("#", at))
            or (after - at >= _LONG_BLOCK and text.startswith(("```", "~~~"), at))  # read fast on its own
            or not zlib.crc32(text[at : at + 24].encode("utf-8", "surrogatepass")) % every
        ):
            yield at
            last = at


def chunk_scale(length: int) -> int:
    """How many times longer than usual the chunks of a draft of ``length`` characters are (1 below 1.6 MB)."""
    return max(1, math.isqrt(length // _SCALE_CHARACTERS))


def _candidate_pattern(text: str) -> re.Pattern[str]:
    return _CANDIDATE if "\r" in text else _CANDIDATE_LF


def block_starts(text: str) -> list[int]:
    """Where a block may start for certain: 0, each line at column 0 after a blank line, and ``len(text)``.

    Not inside front matter, nor before a ``---`` line (it would read as front
    matter); a fence or HTML block may still run across such a line (see
    :func:`split_chunks`).
    """
    first = 0
    if text.startswith("---"):  # front matter: no cut before its closing line
        closing = FRONT_MATTER_END.search(text, 3)
        first = closing.end() if closing is not None else len(text)
    starts = [0]
    starts += [match.end() for match in _candidate_pattern(text).finditer(text, first)]
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


def html_block_is_open(content: str) -> bool:
    """Whether an HTML block of types 1-5 lacks its terminator (so it ran to the end)."""
    for opener, terminator in _OPEN_HTML:
        if opener.match(content):
            return terminator not in content[content.index("<") + 2 :]
    raw = _OPEN_RAW.match(content)
    return raw is not None and f"</{raw.group(1).lower()}>" not in content.lower()


def finalize(scans: list[ChunkScan], text: str, index: LineIndex, chunks: list[tuple[int, ChunkScan]]) -> Extraction:
    """Join chunk scans (each in document offsets) and decide what spans chunks: problems and suppressions.

    Each scan's regions are in document order (``extract.py`` sorts them), so
    the joined list is too.  ``chunks`` are every chunk as (start, scan): the
    headings are read from them (:func:`_placed_headings`), not from ``scans``.
    """
    out = Extraction()
    headings = _placed_headings(chunks)
    starts, marks, directives, answers = [], [], [], []
    for scan in scans:
        out.regions += scan.regions
        out.calc_suppressions += scan.calc_suppressions
        out.python_blocks += scan.python_blocks
        out.diagnostics += scan.diagnostics
        starts += scan.bold_starts
        marks += scan.problem_marks
        directives += scan.margin_marks
        answers += scan.answer_marks
    out.problems, problems = _explicit_problems(marks)
    out.diagnostics += problems
    starts = _with_section_levels(starts, headings)
    out.problems += _book_problems(starts, headings, out.problems, answers, text)
    out.problems.sort(key=lambda p: p.span.start)
    out.suppressions = _suppressions(directives, index, len(text))
    out.headings = headings
    return out


def _placed_headings(chunks: list[tuple[int, ChunkScan]]) -> list[tuple[int, int]]:
    """The (offset, level) of every heading of ``chunks`` (each (start, scan)), in document offsets.

    Placed here rather than with the rest of a scan (``ChunkCache.placed`` copies it): most chunks that
    hold anything beside their regions hold only a heading, and typing near the top moves all of them.
    """
    headings: list[tuple[int, int]] = []
    for start, scan in chunks:
        if scan.headings:
            headings += [(offset + start, level) for offset, level in scan.headings] if start else scan.headings
    return headings


def _with_section_levels(starts: list[ProblemStart], headings: list[tuple[int, int]]) -> list[ProblemStart]:
    """Problem starts whose chunk had no heading before them (level -1) get the level of the last heading above."""
    if not any(start.level < 0 for start in starts):
        return starts
    offsets = [offset for offset, _level in headings]
    placed = []
    for start in starts:
        if start.level < 0:
            above = bisect.bisect_left(offsets, start.offset) - 1
            start = replace(start, level=headings[above][1] if above >= 0 else 0)
        placed.append(start)
    return placed


def _explicit_problems(marks: list[tuple[str, Span, str]]) -> tuple[list[ProblemRegion], list[Diagnostic]]:
    found, problems, open_marks = [], [], []
    for kind, span, ident in marks:
        if kind == "open":
            open_marks.append((span, ident))
        elif open_marks:
            opener, name = open_marks.pop()
            found.append(ProblemRegion(Span(opener.start, span.end), opener, name, name))
        else:
            problems.append(
                make_diagnostic("P003", "'<!-- /problem -->' without an opening '<!-- problem: id -->'", span)
            )
    for opener, name in open_marks:
        problems.append(make_diagnostic("P003", f"problem '{name}' is never closed: add '<!-- /problem -->'", opener))
    return found, problems


def _book_problems(
    starts: list[ProblemStart],
    headings: list[tuple[int, int]],
    explicit: list[ProblemRegion],
    answers: list[tuple[bool, int]],
    text: str,
) -> list[ProblemRegion]:
    # Linear in the number of problems, headings and markers (a book has tens of thousands): each
    # "first one after this offset" is a bisection, never a scan of everything before it.
    spans = sorted((p.span.start, p.span.end) for p in explicit)
    explicit_starts = [begin for begin, _end in spans]
    reach, furthest = [], -1  # the furthest end of the explicit problems starting at or before each one
    for _begin, finish in spans:
        furthest = max(furthest, finish)
        reach.append(furthest)
    # The headings that end a section of each level, and so a problem started in it (for the levels problems
    # start at: a book's are at one or two).
    levels = {min(max(start.level, 1), 6) for start in starts}
    closers = {level: [o for o, lv in headings if lv <= level] for level in levels}
    found = []
    for number, start in enumerate(starts):
        opened = bisect.bisect_right(explicit_starts, start.offset)
        if opened and reach[opened - 1] >= start.offset:
            continue  # inside an explicit problem (end inclusive, as Span.contains)
        end = starts[number + 1].offset if number + 1 < len(starts) else len(text)
        offsets = closers[min(max(start.level, 1), 6)]
        after = bisect.bisect_right(offsets, start.offset)
        if after < len(offsets):
            end = min(end, offsets[after])
        if opened < len(explicit_starts):
            end = min(end, explicit_starts[opened])
        end = _answers_end(start.offset, end, answers, text)
        found.append(ProblemRegion(Span(start.offset, end), start.title_span, start.ident, start.title))
    return found


def _answers_end(start: int, end: int, answers: list[tuple[bool, int]], text: str) -> int:
    """Where a problem ends that could run from ``start`` to ``end``: after its answer blocks.

    The problem ends with the line that closes its first answer block
    (``</details>``, ``{% enddetails %}``), or with the last of the answer
    blocks that follow that one with nothing but blank lines between; what
    comes after belongs to the section again.  A problem with no closed answer
    block keeps ``end``.
    """
    depth = 0
    closed_at: int | None = None
    for position in range(bisect.bisect_left(answers, start, key=_offset), len(answers)):  # no slice: a copy of
        opens, offset = answers[position]  # every later answer for each problem was quadratic in a long book
        if offset >= end:
            break
        if closed_at is not None:
            if not opens or text[closed_at:offset].strip(" \t\r\n>"):
                break
            closed_at = None  # another answer block right after: it belongs to the problem too
        if opens:
            depth += 1
        elif depth:
            depth -= 1
            closed_at = offset if not depth else None
    return closed_at if closed_at is not None else end


def _offset(mark: tuple[bool, int]) -> int:
    return mark[1]


def _suppressions(directives: list[Any], index: LineIndex, length: int) -> list[Suppression]:
    found = []
    off_start: int | None = None
    for kind, span, codes in directives:
        if kind == "off":
            off_start = span.start if off_start is None else off_start
        elif kind == "on":
            if off_start is not None:
                found.append(Suppression(Span(off_start, span.end), None, off_start, span.end))
                off_start = None
        else:
            line, _ = index.position(span.end)
            start = index.offset(line + 1, 0)
            end = index.line_end(line + 1) if line + 1 < index.line_count else start
            found.append(Suppression(span, codes, start, end))
    if off_start is not None:
        found.append(Suppression(Span(off_start, length), None, off_start, length))
    return found
