"""What an analysis reports: values, checks, problems, bindings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from scaling_core.diagnostics import Diagnostic
from scaling_core.document.segments import Segments
from scaling_core.document.sorted_on_read import SortedOnRead
from scaling_core.expr.values import Record, Value
from scaling_core.records import record
from scaling_core.text import LineIndex, Span, holding_position, new_span
from scaling_core.units.display import format_computed, format_in_unit, format_quantity
from scaling_core.units.quantity import Quantity


class _Word(StrEnum):
    """A word with a fixed set of values: a ``str`` everywhere, in reports, comparisons and reprs."""

    def __repr__(self) -> str:
        return str.__repr__(self)  # 'pass', as before: records handed to the Python API print unchanged


class CheckKind(_Word):
    """Where a check is written."""

    CALC = "calc"  # a check statement in a calc block: ``x == 128``
    CODE = "code"  # a code span: `` `2 * 3 = 6` ``
    CLAIM = "claim"  # a prose number with a marker: ``about 17 µs<!-- ≈ t -->``


class CheckStatus(_Word):
    """A check's outcome."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"  # holds only if the number is read in a unit it does not write (U005)
    SKIP = "skip"  # not evaluated, suppressed, or its code turned off


class ProblemStatus(_Word):
    """A problem's verdict."""

    PASS = "pass"  # all its checks pass
    FAIL = "fail"  # a check fails or an error sits inside it
    UNTESTED = "untested"  # no checks, or none of them could be evaluated (untested values, T003)


class _FormattedOnce:
    """A slot for a text formatted on first use: a cache, not a field (equality, hashing and copies ignore it).

    The results below have slots, not a ``__dict__``: 40-50 bytes less each, and a moved copy is made by the
    constructor, faster than copying a dict (``shift.py``); a 20 MB draft holds ~400,000 of them.
    """

    __slots__ = ("_formatted",)
    _formatted: str

    def _cached(self) -> str | None:
        try:
            return self._formatted
        except AttributeError:
            return None


@record(slots=True)
class Binding:
    """A name's definition: value, where it is defined, and in which file.

    Where it is defined is kept as its start, and its end only when that is not
    where its name, written out, ends, as a reference's is (:attr:`span` makes
    the span when read; :meth:`at` makes a definition from one): a span object
    of its own took ~48 more bytes a definition, an end ~32 more, and typing
    near the top of a 20 MB draft moves ~87,000 of them a keystroke
    (``shift.move_each``).
    """

    name: str
    value: Value
    start: int
    #: Where it ends, when not ``start + len(name)``; else None.
    stop: int | None
    path: str
    #: Whether it is defined by an expression written in a calc statement (``source``; a derivation reads it
    #: again, ``written.py``); False for a Python function's.  An imported definition keeps its own.
    written: bool = False
    #: Its expression's text as written.
    source: str = ""
    #: A hashable stand-in for the value (equal fingerprints, equal values).
    fingerprint: object = None

    @classmethod
    def at(
        cls, name: str, value: Value, span: Span, path: str, written: bool = False, source: str = "",
        fingerprint: object = None,
    ) -> Binding:  # fmt: skip
        """The definition of ``name`` written at ``span``."""
        start, end = span
        return cls(name, value, start, None if end - start == len(name) else end, path, written, source, fingerprint)

    @property
    def end(self) -> int:
        """Where it ends (its span's end, without making the span)."""
        stop = self.stop
        return self.start + len(self.name) if stop is None else stop

    @property
    def span(self) -> Span:
        """Where it is defined."""
        return new_span(Span, (self.start, self.end))


@record(slots=True)
class Reference:
    """A use of a name, and the definition it resolved to (None for chips).

    It keeps where it starts, and where it ends only when that is not where
    its name, written out, ends (a name read from LaTeX): a span of its own
    per reference took ~90 bytes (a 20 MB draft has ~190,000 references).
    :meth:`at` makes one from a span.
    """

    start: int
    name: str
    binding: Binding | None
    #: Where it ends, when not ``start + len(name)``; else None.
    stop: int | None = None

    @classmethod
    def at(cls, span: Span, name: str, binding: Binding | None) -> Reference:
        """The reference to ``name`` at ``span``."""
        start, end = span
        return cls(start, name, binding, None if end - start == len(name) else end)

    @property
    def span(self) -> Span:
        """Where it is written."""
        start, stop = self.start, self.stop
        return new_span(Span, (start, start + len(self.name) if stop is None else stop))

    @property
    def end(self) -> int:
        """Where it ends (its span's end, without making the span)."""
        stop = self.stop
        return self.start + len(self.name) if stop is None else stop

    def moved(self, delta: int, binding: Binding | None) -> Reference:
        """It, ``delta`` further on, resolved to ``binding``."""
        stop = self.stop
        return Reference(self.start + delta, self.name, binding, None if stop is None else stop + delta)


@record(slots=True)
class ValueResult(_FormattedOnce):
    """A value shown in the margin (after a statement or an inline expression).

    Where it is shown is kept as where it starts and how long it is (:attr:`span` makes the span when read;
    :meth:`at` makes a value from one): a span object of its own took 64 more bytes a value, and a moved value
    made one again (a 20 MB draft has ~96,000 values); an end took 32 bytes more than a length (most are below
    257: one shared object each), and a moved value made one again.
    """

    start: int
    length: int
    #: How to display it: the text itself (a record's title), ``(divisor, unit)`` after ``-> unit``,
    #: or None for the readable unit display policy chooses.
    display_as: str | tuple[float, str] | None
    quantity: Quantity | None
    name: str | None
    inline: bool = False
    #: Whether it shows an expression written at ``span`` (a calc statement's, a role's): a derivation reads it
    #: again there (``written.py``).
    written: bool = False

    @classmethod
    def at(
        cls, span: Span, display_as: str | tuple[float, str] | None, quantity: Quantity | None, name: str | None,
        inline: bool = False, written: bool = False,
    ) -> ValueResult:  # fmt: skip
        """The value shown at ``span``."""
        start = span[0]
        return cls(start, span[1] - start, display_as, quantity, name, inline, written)

    @property
    def end(self) -> int:
        """Where it ends."""
        return self.start + self.length

    @property
    def span(self) -> Span:
        """Where it is shown."""
        start = self.start
        return new_span(Span, (start, start + self.length))

    @property
    def display(self) -> str:
        """The value as shown in the margin (``189 µs``), formatted on first use: most are never shown."""
        text = self._cached()
        if text is None:
            if isinstance(self.display_as, str) or self.quantity is None:
                text = str(self.display_as)
            elif self.display_as is None:
                text = format_quantity(self.quantity)
            else:
                text = format_in_unit(self.quantity, *self.display_as)
            object.__setattr__(self, "_formatted", text)  # a cache, not state: the fields decide it
        return text


def check_subject(left: str | None, computed: str) -> str:
    """How a verdict names the computed side (``computed`` as text): ``'t' is 186.4 µs`` or ``computed 186.4 µs``."""
    return f"'{left}' is {computed}" if left else f"computed {computed}"


@record(slots=True)
class CheckResult(_FormattedOnce):
    """One check: a calc check, a checked code span or a prose claim.

    Where it is written is kept as where it starts and how long it is, as a value's is (:attr:`span` makes the
    span when read; :meth:`at` makes a check from one).
    """

    kind: CheckKind
    start: int
    length: int
    status: CheckStatus
    op: str
    claim: str
    computed: Quantity | None
    #: The verdict in words; None for a pass, whose message is built on first use (most are never shown).
    text: str | None
    problem: str | None = None
    #: The claimed value and how far below/above it the computed value may lie (SI units).
    claimed: Quantity | None = None
    allowance: tuple[float, float] | None = None
    #: The name on the computed side, if any (``t`` in ``t ≈ 5 ms``).
    left: str | None = None

    @classmethod
    def at(
        cls, kind: CheckKind, span: Span, status: CheckStatus, op: str, claim: str, computed: Quantity | None,
        text: str | None, problem: str | None = None, claimed: Quantity | None = None,
        allowance: tuple[float, float] | None = None, left: str | None = None,
    ) -> CheckResult:  # fmt: skip
        """The check written at ``span``."""
        start = span[0]
        return cls(kind, start, span[1] - start, status, op, claim, computed, text, problem, claimed, allowance, left)

    @property
    def end(self) -> int:
        """Where it ends."""
        return self.start + self.length

    @property
    def span(self) -> Span:
        """Where it is written."""
        start = self.start
        return new_span(Span, (start, start + self.length))

    @property
    def computed_display(self) -> str:
        """The computed value as shown in messages (4 significant digits); ``3200 (no unit)`` without a unit."""
        text = self._cached()
        if text is None:
            text = format_computed(self.computed, self.claimed, 4) if self.computed is not None else ""
            object.__setattr__(self, "_formatted", text)  # a cache, not state
        return text

    @property
    def message(self) -> str:
        """The verdict in words: ``'t' is 186.4 µs; claim 186 µs holds``."""
        if self.text is not None:
            return self.text
        return f"{check_subject(self.left, self.computed_display)}; claim {self.claim} holds"


@record
class ProblemResult:
    """A problem's verdict."""

    ident: str
    title: str
    span: Span
    title_span: Span
    status: ProblemStatus
    passed: int
    failed: int
    total: int


#: The ``lookups`` key of :meth:`DocumentAnalysis.problem_at`'s position function.
_PROBLEM_POSITION = "problem_position"


@dataclass
class DocumentAnalysis:
    """Everything the engine knows about one draft."""

    path: str
    text: str
    index: LineIndex
    diagnostics: list[Diagnostic] = field(default_factory=list)
    values: Sequence[ValueResult] = field(default_factory=list)  # a Segments: moved parts built when read
    checks: Sequence[CheckResult] = field(default_factory=list)  # a Segments, like values
    problems: list[ProblemResult] = field(default_factory=list)
    #: Top-level names visible to importers, in definition order.
    exports: dict[str, Binding] = field(default_factory=dict)
    #: Every definition, including problem-local ones (for symbols and hover).
    bindings: list[Binding] = field(default_factory=list)
    #: The chip records the document was evaluated with.
    records: dict[str, Record] = field(default_factory=dict)
    #: Every resolved use of a name, in document order.
    references: Sequence[Reference] = field(default_factory=list)  # a Segments, like values
    #: The targets of the draft's ``import "..."`` statements as written, in order (resolved or not).
    imports: list[str] = field(default_factory=list)
    #: Each Markdown heading outside directives: (offset of its line, level), in order.
    headings: list[tuple[int, int]] = field(default_factory=list)
    #: Where diagnostics are suppressed: (start, end, codes or None for every code), from
    #: ``<!-- margin: ... -->`` comments and ``# margin: ignore`` lines.
    suppressions: list[tuple[int, int, frozenset[str] | None]] = field(default_factory=list)
    #: Indexes the editor's queries build once per analysis, by name (``document/lookup.py``); not a result.
    lookups: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    def held_objects(self) -> list[object]:
        """What this analysis holds many of, in one flat list, none built on the way (moved parts as recorded,
        results out of order as added).

        For a caller that frees a big analysis a slice at a time: once the
        analysis is dropped, the list holds the last references to them.
        """
        held: list[object] = [*self.exports.values(), *self.bindings, *self.diagnostics, *self.problems]
        for results in (self.references, self.values, self.checks):
            if type(results) is SortedOnRead:  # its items as added, not sorted for this (~20 ms for 30,000 checks)
                results = results.contents()[0]
            if type(results) is Segments:  # not isinstance: compiled, Segments shares Sequence's ABC cache
                for part in results.parts():
                    if type(part) is list:
                        held += part
                    else:
                        held.append(part)
            else:
                held += results
        return held

    def line(self, offset: int) -> int:
        """1-based line of an offset."""
        return self.index.position(offset)[0] + 1

    def problem_at(self, offset: int) -> ProblemResult | None:
        """The problem that holds ``offset`` (the outermost, where problems nest), or None outside every
        problem."""
        position = self.lookups.get(_PROBLEM_POSITION)
        if position is None:  # the problems' starts and reach listed once per analysis
            position = self.lookups[_PROBLEM_POSITION] = holding_position(self.problems)
        at: int = position(offset)  # type: ignore[operator]
        return self.problems[at] if at >= 0 else None
