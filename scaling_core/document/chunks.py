"""Chunked extraction: parse only the parts of a document that changed.

A document is split at headings that start a new block for certain: an ATX
heading at column 0, after a blank line, outside any fenced block and any
HTML comment.  No Markdown block crosses such a line, so each chunk parses on
its own, and an unchanged chunk's scan is reused (shifted) from the cache
(``incremental.ChunkCache``).
What spans chunks — problem extents, explicit problem markers, ``margin:
off``/``on`` regions, next-line suppressions — is decided by :func:`finalize`.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.regions import ChunkScan, ClaimRegion, Extraction, ProblemRegion, ProblemStart, Suppression
from scaling_core.text import LineIndex, Span

#: A heading at column 0 right after a blank line: where a chunk may start.
_CANDIDATE = re.compile(r"(?:\n[ \t]*\n|\r\n[ \t]*\r\n|\r[ \t]*\r)(?=#{1,6}(?:[ \t]|\r|\n|$))")
#: HTML blocks of CommonMark types 1-5 run to their own terminator, past blank lines and headings.
_OPEN_HTML = (
    (re.compile(r"\s{0,3}<!--"), "-->"),
    (re.compile(r"\s{0,3}<\?"), "?>"),
    (re.compile(r"\s{0,3}<!\[CDATA\["), "]]>"),
    (re.compile(r"\s{0,3}<![A-Za-z]"), ">"),
)
_OPEN_RAW = re.compile(r"\s{0,3}<(script|pre|style|textarea)(?:\s|>|$)", re.I)


def split_chunks(text: str) -> list[tuple[int, int]]:
    """Candidate chunks: cut before every heading that follows a blank line.

    A candidate may cut through a fence or an HTML comment; :func:`extract`
    notices from the chunk's own parse (:func:`is_open_at_end`) and merges it
    with the next, so markdown-it alone decides the block structure.
    """
    bounds = [0] + [m.end() for m in _CANDIDATE.finditer(text)] + [len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a] or [(0, len(text))]


def html_block_is_open(content: str) -> bool:
    """Whether an HTML block of types 1-5 lacks its terminator (so it ran to the end)."""
    for opener, terminator in _OPEN_HTML:
        if opener.match(content):
            return terminator not in content[content.index("<") + 2 :]
    raw = _OPEN_RAW.match(content)
    return raw is not None and f"</{raw.group(1).lower()}>" not in content.lower()


def finalize(scans: list[ChunkScan], text: str, index: LineIndex) -> Extraction:
    """Join chunk scans and decide what spans chunks: problems and suppressions."""
    out = Extraction()
    headings, starts, marks, directives, answers = [], [], [], [], []
    for scan in scans:
        out.regions += scan.regions
        out.python_blocks += scan.python_blocks
        out.diagnostics += scan.diagnostics
        headings += scan.headings
        starts += scan.bold_starts
        marks += scan.problem_marks
        directives += scan.margin_marks
        answers += scan.answer_marks
    out.problems, problems = _explicit_problems(marks)
    out.diagnostics += problems
    out.problems += _book_problems(starts, headings, out.problems, answers, text)
    out.problems.sort(key=lambda p: p.span.start)
    out.suppressions = _suppressions(directives, index, len(text))
    out.regions.sort(key=lambda r: r.number_span.start if isinstance(r, ClaimRegion) else r.span.start)
    return out


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
    found = []
    for number, start in enumerate(starts):
        if any(p.span.contains(start.offset) for p in explicit):
            continue
        end = starts[number + 1].offset if number + 1 < len(starts) else len(text)
        for offset, level in headings:
            if offset > start.offset and level <= max(start.level, 1):
                end = min(end, offset)
                break
        for other in explicit:
            if other.span.start > start.offset:
                end = min(end, other.span.start)
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
    for opens, offset in answers[bisect.bisect_left(answers, start, key=_offset) :]:
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
