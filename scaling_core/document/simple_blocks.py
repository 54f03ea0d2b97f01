"""Blocks whose structure is certain from their lines alone, read without markdown-it.

markdown-it-py reads a draft line by line through a dozen block rules; on a
book-sized draft that was most of the extraction.  Yet most of a draft is
made of a few plain shapes.  The text is cut into *segments*, each starting
at a line at column 0 after a blank line (:func:`chunks.block_starts`: no
Markdown block crosses such a line, except a fence or an HTML block that runs
on, which the extractor notices and reads on), and a segment made of

* an ATX heading (``## Title``) line,
* a paragraph whose lines cannot start or interrupt another block,
* a tight bullet list of one-line items of such text, or
* a fenced block at column 0 with its closing line (it may hold blank lines),

then blank lines, is read here; every other segment goes to markdown-it, which
decides all doubtful cases.  A line is doubtful when, after its indentation,
it starts with a character that could begin a block (``# > ` ~ : < = + -``,
a list or rule marker, an ordered-list number, a blank line), so a shape
read here gives the same tokens markdown-it would.  The property test in
``tests/core/test_simple_blocks.py`` checks both readings agree.
"""

from __future__ import annotations

import re

#: A line start (after its indentation) that may begin or interrupt a block, or a blank line.
_DOUBTFUL = r"(?:[#>`~:<=+\-\n\f\v]|[*_](?:[ \t]|$)|[*_](?:[ \t]*[*_]){2,}[ \t]*$|[0-9]{1,9}[.)](?:[ \t]|$))"
_DOUBTFUL_NEXT_LINE = re.compile(r"\n[ \t]*" + _DOUBTFUL, re.M)
#: A paragraph's first line must not open a link reference definition (``[id]: url``) either.
_DOUBTFUL_FIRST = re.compile(r"[\s\[]|" + _DOUBTFUL, re.M)
_HEADING = re.compile(r"(#{1,6})(?:[ \t][^\n]*)?\n?")
_ITEM = re.compile(r"[-*+] ")
#: A fence's opening line at column 0: its marker run and info string.
OPENING_FENCE = re.compile(r"(`{3,}|~{3,})([^\n]*)\n")

#: What a segment holds, line numbers relative to its first line: ("heading", line, level),
#: ("paragraph", first, last), ("item", line).
Block = tuple[str, int, int]


def read_segment(text: str, start: int, end: int) -> list[Block] | None:
    """The blocks of ``text[start:end]`` (a segment with ``\\n`` line breaks), or None when markdown-it must read it."""
    stop = start + len(text[start:end].rstrip(" \t\n"))
    if stop <= start:
        return None
    line_end = text.find("\n", stop, end)
    stop = line_end if line_end >= 0 else end  # the last line with its trailing spaces
    blocks: list[Block] = []
    line = 0
    heading = _HEADING.match(text, start, stop)
    if heading is not None and (heading.end() == stop or text[heading.end() - 1] == "\n"):
        blocks.append(("heading", 0, len(heading.group(1))))
        if heading.end() >= stop:
            return blocks
        start, line = heading.end(), 1
    if _DOUBTFUL_FIRST.match(text, start, stop) is None:
        if _DOUBTFUL_NEXT_LINE.search(text, start, stop) is not None:
            return None
        blocks.append(("paragraph", line, line + text.count("\n", start, stop) + 1))
        return blocks
    return _tight_list(text, start, stop, line, blocks)


def _tight_list(text: str, start: int, stop: int, line: int, blocks: list[Block]) -> list[Block] | None:
    """A bullet list with one line per item and one marker throughout (``- a`` / ``- b``), or None."""
    marker = text[start]
    for row in text[start:stop].split("\n"):
        if _ITEM.match(row) is None or row[0] != marker or _DOUBTFUL_FIRST.match(row, 2) is not None:
            return None
        blocks.append(("item", line, 0))
        line += 1
    return blocks


def closed_fence(text: str, start: int) -> tuple[str, str, int] | None:
    """A fence opening at ``start`` (column 0) and its closing line: (marker, info, end of the closing line).

    CommonMark: the block ends at the first line of at least as many of the
    opening characters, indented at most three spaces, with only spaces or
    tabs after them; a backtick fence's info string has no backtick.  None
    when there is no such line (the fence would run to the end of the text).
    """
    opening = OPENING_FENCE.match(text, start)
    if opening is None:
        return None
    markup, info = opening.groups()
    if markup[0] == "`" and "`" in info:
        return None
    end = closing_line_end(text, markup[0], len(markup), opening.end())
    return (markup, info, end) if end is not None else None


def closing_line_end(text: str, character: str, length: int, start: int) -> int | None:
    """Where the first line at or after ``start`` (a line start) that closes a fence of ``length`` times
    ``character`` ends (before its line break): up to three spaces, at least as many of the character, then
    only spaces or tabs.  Lines end at ``\n``.  Searched with ``str.find`` (a regex with ``^`` tries every
    character: a 5,000-statement block took ~1 ms)."""
    marker = character * length
    at = text.find(marker, start)
    while at != -1:
        line = text.rfind("\n", start, at) + 1 or start
        end = at + length
        while end < len(text) and text[end] == character:
            end += 1
        after = end
        while after < len(text) and text[after] in " \t":
            after += 1
        if at - line <= 3 and not text[line:at].strip(" ") and (after == len(text) or text[after] == "\n"):
            return after
        at = text.find(marker, end)
    return None
