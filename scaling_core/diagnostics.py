"""Diagnostics as values, and the catalogue of stable diagnostic codes.

A code is one letter for the phase plus three digits.  Messages may change;
codes never do.  ``docs/diagnostics.md`` documents each code with an example
and ``tests/golden/`` holds a document for each (a test enforces both).
"""

from __future__ import annotations

import enum
from dataclasses import field

from scaling_core.records import record
from scaling_core.text import Span


class Severity(enum.IntEnum):
    """Diagnostic severity, numbered as in the LSP."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        """Lower-case name used in text and JSON output."""
        return self.name.lower()


@record(slots=True)
class CodeInfo:
    """Catalogue entry: default severity and a one-line title."""

    code: str
    severity: Severity
    title: str


_E, _W, _I, _H = Severity.ERROR, Severity.WARNING, Severity.INFORMATION, Severity.HINT

CODES: dict[str, CodeInfo] = {
    info.code: info
    for info in (
        CodeInfo("S001", _E, "syntax error in a calc statement"),
        CodeInfo("S002", _E, "unterminated calc block, comment or problem"),
        CodeInfo("S003", _E, "invalid character in a calc statement"),
        CodeInfo("S004", _E, "claim marker with no number before it"),
        CodeInfo("N001", _E, "unknown name"),
        CodeInfo("N002", _E, "unknown unit"),
        CodeInfo("N003", _E, "unknown field of a record"),
        CodeInfo("N004", _E, "unknown function"),
        CodeInfo("N005", _E, "wrong number of arguments"),
        CodeInfo("N006", _E, "imported file not found"),
        CodeInfo("N007", _E, "import cycle"),
        CodeInfo("N008", _H, "definition shadows an earlier one"),
        CodeInfo("H001", _E, "not a slice of this chip"),
        CodeInfo("U001", _E, "incompatible units"),
        CodeInfo("U002", _E, "conversion to an incompatible unit"),
        CodeInfo("U003", _H, "FLOPS read as a rate"),
        CodeInfo("U004", _H, "lone B read as bytes"),
        CodeInfo("U005", _W, "claim matches only with a unit prefix the author did not write"),
        CodeInfo("U006", _E, "invalid operation on units"),
        CodeInfo("C001", _E, "check failed"),
        CodeInfo("C002", _H, "code span not checked"),
        CodeInfo("P001", _E, "problem failed"),
        CodeInfo("P002", _H, "problem has no checks"),
        CodeInfo("P003", _E, "unmatched problem marker"),
        CodeInfo("P004", _H, "problem untested: none of its checks could be evaluated"),
        CodeInfo("E001", _E, "division by zero"),
        CodeInfo("E002", _E, "numeric overflow or non-finite result"),
        CodeInfo("E003", _E, "evaluation limit exceeded"),
        CodeInfo("E004", _E, "math domain error"),
        CodeInfo("E005", _E, "array length mismatch"),
        CodeInfo("E999", _E, "internal error (a bug in Margin)"),
        CodeInfo("T001", _W, "trusted code block not run"),
        CodeInfo("T002", _E, "trusted code raised an error"),
        CodeInfo("T003", _I, "value not known: check untested"),
        CodeInfo("T004", _W, "noisy measurement: no verdict"),
        CodeInfo("T005", _W, "stale measurement: the request changed"),
        CodeInfo("M001", _W, "suppression comment names an unknown code"),
    )
}


@record(slots=True)
class Related:
    """A secondary location attached to a diagnostic (in the same document)."""

    span: Span
    message: str


@record(slots=True)
class Fix:
    """A replacement of ``span`` by ``text`` that resolves the diagnostic."""

    title: str
    span: Span
    text: str


@record(slots=True)
class Diagnostic:
    """One finding about a document, at an exact span."""

    code: str
    message: str
    span: Span
    severity: Severity
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    notes: tuple[str, ...] = field(default=())


def make_diagnostic(
    code: str,
    message: str,
    span: Span,
    *,
    related: tuple[Related, ...] = (),
    fixes: tuple[Fix, ...] = (),
    notes: tuple[str, ...] = (),
) -> Diagnostic:
    """Build a diagnostic with the catalogue's default severity for ``code``."""
    return Diagnostic(code, message, span, CODES[code].severity, related, fixes, notes)
