"""The evaluable regions of a draft, as found by ``extract.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate

from scaling_core.diagnostics import Diagnostic
from scaling_core.records import record
from scaling_core.text import Span, new_span


def content_span(span: Span, offset: int, text: str) -> Span:
    """The span of ``text``, ``offset`` into ``span``."""
    start = span[0] + offset
    return new_span(Span, (start, start + len(text)))


@record(slots=True, eq=False)
class CalcRegion:
    """A ```` ```calc ```` block or a ``<!-- calc … -->`` comment."""

    span: Span
    #: Its content lines: as written (a fence's), the draft's text from the first one's start to the last one's end (lines
    #: one ``\n`` apart, nothing to strip before them, fewer than a long block's, ``pieces.MIN_LINES``);
    #: else (offset, text) of each line, in document offsets.
    content: str | tuple[tuple[int, str], ...]
    hidden: bool
    #: Where the first content line starts, with ``content`` a text (-1 with a tuple of lines).
    first: int

    @property
    def lines(self) -> tuple[tuple[int, str], ...]:
        """(offset, text) of each content line, in document offsets: made when read from a text.

        A pair per line kept with every block took ~160 bytes a line (an offset, a string, two tuples: ~15 MB
        of a 20 MB draft's analysis), and a block's cache key held its text again; the text alone is what the
        lines are, and the key holds that very string (``incremental.region_key``).
        """
        content = self.content
        if not isinstance(content, str):
            return content
        rows = content.split("\n")
        return tuple(zip(accumulate(map((1).__add__, map(len, rows)), initial=self.first), rows))

    @property
    def line_count(self) -> int:
        """How many content lines it has (without making them)."""
        content = self.content
        return content.count("\n") + 1 if type(content) is str else len(content)

    def __eq__(self, other: object) -> bool:
        """The same block: its lines kept as written or as pairs alike (a text with a carriage return anywhere
        keeps them as pairs)."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, CalcRegion)
        return (self.span, self.hidden, self.lines) == (other.span, other.hidden, other.lines)

    def __hash__(self) -> int:
        return hash((self.span, self.hidden, self.lines))


@record(slots=True)
class CodeSpanRegion:
    """A code span (``role`` set for the MyST form ``{calc}`expr```).

    Where it is is kept as where it starts and how long it is (:attr:`span` makes the span when read): a span
    of its own and its end took ~100 bytes a code span (~37,000 of them in a 20 MB draft).
    """

    start: int
    length: int
    #: How far into ``span`` its content (``text``) starts (past the role, the backticks and spaces).
    content_offset: int
    text: str
    role: bool

    @property
    def span(self) -> Span:
        """The code span, its role and backticks included."""
        start = self.start
        return new_span(Span, (start, start + self.length))

    @property
    def content_span(self) -> Span:
        """Where its content is: made when read, from its start and the offset (a span of its own per code
        span took ~120 bytes: ~80,000 of them in a 20 MB draft)."""
        start = self.start + self.content_offset
        return new_span(Span, (start, start + len(self.text)))


def may_check(text: str) -> bool:
    """Whether a code span's text may be a check or a value (``=``, ``≈`` or ``~`` in it).

    Most code spans are ordinary code (``bf16[8192, 32768]``, ``int8``: ~55% of a book's): the scan keeps
    a code span as a region only with a ``{calc}`` role or when this says yes, so every
    :class:`CodeSpanRegion` may be checked.
    """
    return "=" in text or "≈" in text or "~" in text


@record(slots=True)
class ClaimRegion:
    """A prose number followed by ``<!-- OP expr -->``.

    Where its parts lie is kept as offsets from where its number starts (``start``), each a small number, and
    their spans are made when read: four spans of its own and their offsets took ~490 bytes a claim (~6.7 MB of
    a 20 MB draft's analysis), and moving a claim moved each of them.
    """

    #: Where its number starts.
    start: int
    #: Its number as written, with its unit (``number_span`` ends where it ends).
    number_text: str
    #: Where the number's unit starts and ends, from ``start``; both -1 without a unit.
    unit_from: int
    unit_to: int
    #: The comparison, as written (interned: a handful of them), and where it starts, from ``start``.
    op: str
    op_from: int
    #: The expression after the comparison, and where it starts, from ``start``.
    expr_text: str
    expr_from: int
    #: Where the ``<!-- OP expr -->`` comment starts and ends, from ``start``.
    marker_from: int
    marker_to: int

    @property
    def number_span(self) -> Span:
        """The prose number with its unit."""
        start = self.start
        return new_span(Span, (start, start + len(self.number_text)))

    @property
    def unit_span(self) -> Span | None:
        """The number's unit, if it has one."""
        if self.unit_from < 0:
            return None
        return new_span(Span, (self.start + self.unit_from, self.start + self.unit_to))

    @property
    def op_span(self) -> Span:
        """The comparison."""
        at = self.start + self.op_from
        return new_span(Span, (at, at + len(self.op)))

    @property
    def expr_offset(self) -> int:
        """Where the expression starts."""
        return self.start + self.expr_from

    @property
    def marker_span(self) -> Span:
        """The ``<!-- OP expr -->`` comment."""
        return new_span(Span, (self.start + self.marker_from, self.start + self.marker_to))

    @property
    def end(self) -> int:
        """Where its comment ends (the region's end)."""
        return self.start + self.marker_to


@record(slots=True)
class MathRegion:
    """LaTeX math (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``); read only with the ``latex_math`` setting."""

    span: Span
    #: How far into ``span`` its content (``text``) starts (past the opening delimiter).
    content_offset: int
    text: str

    @property
    def content_span(self) -> Span:
        """Where its content is (made when read, as a code span's)."""
        return content_span(self.span, self.content_offset, self.text)


@record(slots=True)
class ProblemRegion:
    """A problem's extent with its title span."""

    span: Span
    title_span: Span
    ident: str
    title: str


@record(slots=True)
class PythonRegion:
    """A ```` ```python calc ```` block (trusted code)."""

    span: Span
    info_span: Span


@record(slots=True)
class Suppression:
    """``<!-- margin: ignore CODE -->`` (next line) or an off/on region."""

    span: Span
    codes: frozenset[str] | None
    #: Offsets the suppression covers.
    start: int
    end: int


Region = CalcRegion | CodeSpanRegion | ClaimRegion | MathRegion


@dataclass
class Extraction:
    """Everything found in one draft, in document order."""

    regions: list[Region] = field(default_factory=list)
    problems: list[ProblemRegion] = field(default_factory=list)
    python_blocks: list[PythonRegion] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    headings: list[tuple[int, int]] = field(default_factory=list)  # (offset of its line, level)
    #: ``# margin: ignore`` lines of calc blocks.
    calc_suppressions: list[Suppression] = field(default_factory=list)
    #: With a chunk cache: each chunk as (its start, its scan with offsets relative to that start).  Then
    #: ``regions`` stays empty until :func:`~scaling_core.document.extract.all_regions` places them.
    chunks: list[tuple[int, ChunkScan]] = field(default_factory=list)
    #: The chunks as the region driver walks them: a long calc block's chunk as one per piece (``piece_chunks.py``).
    walked: list[tuple[int, ChunkScan]] = field(default_factory=list)


@dataclass
class ChunkScan:
    """What one chunk holds, before the document-wide pass (offsets relative to the chunk)."""

    regions: list[Region] = field(default_factory=list)
    python_blocks: list[PythonRegion] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    headings: list[tuple[int, int]] = field(default_factory=list)  # (offset, level)
    bold_starts: list[ProblemStart] = field(default_factory=list)
    #: ("open", span, ident) and ("close", span, "") explicit problem markers.
    problem_marks: list[tuple[str, Span, str]] = field(default_factory=list)
    #: ("off" | "on" | "ignore", span, codes) margin directives.
    margin_marks: list[tuple[str, Span, frozenset[str] | None]] = field(default_factory=list)
    #: Whether a fence or HTML block is still open at the chunk's end (it would run into the next).
    open_at_end: bool = False
    #: Answer blocks: (True, where one opens) and (False, the end of the line that closes one), in order.
    answer_marks: list[tuple[bool, int]] = field(default_factory=list)
    #: ``# margin: ignore`` lines of its calc blocks.
    calc_suppressions: list[Suppression] = field(default_factory=list)
    #: Filled in by the region driver when first needed: where each region starts (relative), and for
    #: ranges of its regions, by the ``code_spans`` setting and the range, every name their checked regions
    #: mention (with the range's end negated: ``()`` if one of them is checked, None if none is).
    starts: list[int] | None = field(default=None, compare=False, repr=False)
    names: dict[tuple[bool, int, int], tuple[str, ...] | None] = field(default_factory=dict, compare=False, repr=False)


@record(slots=True)
class ProblemStart:
    """A book-style problem's lead-in; its extent is decided document-wide."""

    offset: int
    title_span: Span
    ident: str
    title: str
    level: int
