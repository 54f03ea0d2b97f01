"""The evaluable regions of a draft, as found by ``extract.py``."""

from __future__ import annotations

from dataclasses import dataclass

from scaling_core.text import Span


@dataclass(frozen=True, slots=True)
class CalcRegion:
    """A ```` ```calc ```` block or a ``<!-- calc … -->`` comment."""

    span: Span
    #: (offset, text) of each content line, in document offsets.
    lines: tuple[tuple[int, str], ...]
    hidden: bool


@dataclass(frozen=True, slots=True)
class CodeSpanRegion:
    """A code span (``role`` set for the MyST form ``{calc}`expr```)."""

    span: Span
    content_span: Span
    text: str
    role: bool


@dataclass(frozen=True, slots=True)
class ClaimRegion:
    """A prose number followed by ``<!-- OP expr -->``."""

    number_span: Span
    number_text: str
    unit_text: str
    unit_span: Span | None
    op: str
    op_span: Span
    expr_text: str
    expr_offset: int
    marker_span: Span


@dataclass(frozen=True, slots=True)
class ProblemRegion:
    """A problem's extent with its title span."""

    span: Span
    title_span: Span
    ident: str
    title: str


@dataclass(frozen=True, slots=True)
class PythonRegion:
    """A ```` ```python calc ```` block (trusted code)."""

    span: Span
    info_span: Span


@dataclass(frozen=True, slots=True)
class Suppression:
    """``<!-- margin: ignore CODE -->`` (next line) or an off/on region."""

    span: Span
    codes: frozenset[str] | None
    #: Offsets the suppression covers.
    start: int
    end: int


Region = CalcRegion | CodeSpanRegion | ClaimRegion
