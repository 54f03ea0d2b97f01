"""``margin check --fix`` and ``--diff``: apply the safe quick fixes, verified by re-analysis.

Which fixes are safe is decided per diagnostic code (:data:`SAFE_CODES`).  Today
only C001 on a prose claim carries a fix: it replaces the stale claimed number
with the computed value written in the author's style (``12 days`` ->
``22 days``).  P001 (problem failed) has no fix of its own; a problem passes
once the fixes of its claims are applied.  Any other fix an editor may offer (a
did-you-mean name, a change of meaning) is never applied here.

A fix is applied only when re-analysis of the fixed text shows every check at
the replaced text passing and nothing worse anywhere: no error or warning the
text before did not have (spans compared after shifting them by the edits), no
check or problem that stops passing (even one whose diagnostic is suppressed or
switched off).  The safe fixes of one round are tried together; those whose own
check would still fail are dropped and the rest tried again, and a failure no
single fix can be blamed for is narrowed down by halving (see
:func:`_apply_verified`).  Rounds repeat, on the new text, until a round applies
nothing (at most :data:`MAX_ROUNDS`), so a fix that only verifies once another
is applied still gets its turn.  Text outside the replaced spans is never
touched: line endings, a byte-order mark, trailing spaces and a missing final
newline stay as they are.  Spans are code-point offsets, which is what ``str`` slicing uses.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scaling_core import Config, DocumentAnalysis, ImportContext, Severity, analyze_document
from scaling_core.diagnostics import Diagnostic, Fix
from scaling_core.text import LineIndex, Span

#: Codes whose quick fix ``--fix`` may apply, with why it is safe.
SAFE_CODES: dict[str, str] = {
    "C001": "replaces a wrong claimed number with the computed value in the author's style",
}

#: Rounds of fixing before giving up on reaching a fixed point.
MAX_ROUNDS = 4

#: An edit: replace ``span`` of the text by ``text``.
_Edit = tuple[Span, str]


@dataclass(frozen=True)
class AppliedFix:
    """A fix that was applied; line and column (1-based, code points) are in the original text."""

    code: str
    line: int
    column: int
    old: str
    new: str
    title: str


@dataclass(frozen=True)
class DeclinedFix:
    """A fixable diagnostic left as it is; line and column are in the fixed text."""

    code: str
    line: int
    column: int
    title: str
    reason: str


@dataclass(frozen=True)
class FixOutcome:
    """The fixed text, what was applied and what was not, and the analysis of the fixed text."""

    text: str
    applied: tuple[AppliedFix, ...]
    declined: tuple[DeclinedFix, ...]
    analysis: DocumentAnalysis = field(compare=False, repr=False)


def fix_text(text: str, path: str, config: Config, context: ImportContext | None = None) -> FixOutcome:
    """Apply every safe quick fix to ``text`` that verifies; see the module docstring."""
    context = context if context is not None else ImportContext()

    def analyze(source: str) -> DocumentAnalysis:
        return analyze_document(source, path, config, context=context)

    current, analysis = text, analyze(text)
    original = LineIndex(text)
    rounds: list[list[_Edit]] = []  # the edits of each round, in the coordinates of the text before it
    applied: list[AppliedFix] = []
    declined: list[tuple[Diagnostic, str]] = []
    for _ in range(MAX_ROUNDS):
        candidates, declined = _candidates(analysis)
        if not candidates:
            break
        before = current
        accepted, rejected, current, analysis = _apply_verified(current, analysis, candidates, analyze)
        declined += rejected
        if not accepted:
            break
        for diagnostic, (span, new) in accepted:
            line, column = original.position(_map_back(span.start, rounds))
            old = before[span.start : span.end]
            applied.append(AppliedFix(diagnostic.code, line + 1, column + 1, old, new, diagnostic.fixes[0].title))
        rounds.append([edit for _, edit in accepted])
    else:
        candidates, declined = _candidates(analysis)
        declined += [(d, f"not tried: still changing after {MAX_ROUNDS} rounds") for d, _ in candidates]
    out = []
    for diagnostic, reason in sorted(declined, key=lambda item: item[0].span):
        line, column = analysis.index.position(diagnostic.span.start)
        out.append(DeclinedFix(diagnostic.code, line + 1, column + 1, diagnostic.fixes[0].title, reason))
    return FixOutcome(current, tuple(applied), tuple(out), analysis)


def _candidates(analysis: DocumentAnalysis) -> tuple[list[tuple[Diagnostic, _Edit]], list[tuple[Diagnostic, str]]]:
    """The safe fixes of an analysis, and the fixable diagnostics that are not safe (with why)."""
    safe: list[tuple[Diagnostic, _Edit]] = []
    unsafe: list[tuple[Diagnostic, str]] = []
    for diagnostic in analysis.diagnostics:
        if not diagnostic.fixes:
            continue
        reason = _unsafe(diagnostic, analysis)
        if reason:
            unsafe.append((diagnostic, reason))
        else:
            fix: Fix = diagnostic.fixes[0]
            safe.append((diagnostic, (fix.span, fix.text)))
    safe.sort(key=lambda item: item[1][0])
    kept: list[tuple[Diagnostic, _Edit]] = []
    for item in safe:
        if kept and item[1][0].start < kept[-1][1][0].end:
            unsafe.append((item[0], "overlaps another fix"))
        else:
            kept.append(item)
    return kept, unsafe


def _unsafe(diagnostic: Diagnostic, analysis: DocumentAnalysis) -> str | None:
    """Why ``--fix`` must not apply this diagnostic's fix, or None when it may."""
    if diagnostic.code not in SAFE_CODES:
        return f"{diagnostic.code} fixes are not applied automatically"
    if len(diagnostic.fixes) != 1:
        return "several fixes are offered: choose one in the editor"
    fix = diagnostic.fixes[0]
    if fix.span != diagnostic.span:
        return "the fix edits more than the claimed number"
    if not any(c.kind == "claim" and c.span == fix.span and c.status == "fail" for c in analysis.checks):
        return "the fix does not replace a failing claim"
    return None


def _apply_verified(
    text: str,
    analysis: DocumentAnalysis,
    candidates: list[tuple[Diagnostic, _Edit]],
    analyze: Callable[[str], DocumentAnalysis],
) -> tuple[list[tuple[Diagnostic, _Edit]], list[tuple[Diagnostic, str]], str, DocumentAnalysis]:
    """Apply as many ``candidates`` as verify; returns ``(accepted, rejected, new text, its analysis)``.

    All are tried together; fixes whose own check would not pass are dropped and the
    rest tried again; a failure no fix can be blamed for splits the rest in halves,
    down to single fixes.  Every try is verified against ``analysis`` with all the
    edits accepted so far, so the result is checked as a whole.  Spans stay in
    ``text``'s coordinates.
    """
    accepted: list[tuple[Diagnostic, _Edit]] = []
    rejected: list[tuple[Diagnostic, str]] = []
    result: list[Any] = [text, analysis]

    def attempt(pending: list[tuple[Diagnostic, _Edit]]) -> None:
        while pending:
            edits = [edit for _, edit in accepted + pending]
            fixed = _apply(text, edits)
            after = analyze(fixed)
            reason, blamed = _verify(analysis, after, edits)
            if reason is None:
                accepted.extend(pending)
                result[:] = [fixed, after]
                return
            culprits = [item for item in pending if item[1] in blamed]
            if culprits:
                rejected.extend((diagnostic, blamed[edit]) for diagnostic, edit in culprits)
                pending = [item for item in pending if item[1] not in blamed]
            elif len(pending) == 1:
                if blamed:  # it spoils a fix accepted before it
                    reason = "it would spoil another fix: " + next(iter(blamed.values()))
                rejected.append((pending[0][0], reason))
                return
            else:
                half = len(pending) // 2
                attempt(pending[:half])
                attempt(pending[half:])
                return

    attempt(list(candidates))
    accepted.sort(key=lambda item: item[1][0])
    return accepted, rejected, result[0], result[1]


def _apply(text: str, edits: list[_Edit]) -> str:
    """Replace each span (sorted, not overlapping) by its text, from the end backwards."""
    for span, new in sorted(edits, key=lambda edit: edit[0], reverse=True):
        text = text[: span.start] + new + text[span.end :]
    return text


def _map(offset: int, edits: list[_Edit], end: bool) -> int:
    """Where ``offset`` of the text before ``edits`` lies after them (inside an edit: its start or end)."""
    delta = 0
    for span, new in edits:
        if offset <= span.start:
            break
        if offset < span.end:
            return span.start + delta + (len(new) if end else 0)
        delta += len(new) - (span.end - span.start)
    return offset + delta


def _map_back(offset: int, rounds: list[list[_Edit]]) -> int:
    """Where ``offset`` of the text after ``rounds`` of edits lay in the original text."""
    for edits in reversed(rounds):
        offset = _unmap(offset, edits)
    return offset


def _unmap(offset: int, edits: list[_Edit]) -> int:
    """Where ``offset`` of the text after ``edits`` lay before them (inside an edit: its start or end)."""
    delta = 0
    for span, new in edits:
        start = span.start + delta
        if offset <= start:
            break
        if offset <= start + len(new):
            return span.start if offset < start + len(new) else span.end
        delta += len(new) - (span.end - span.start)
    return offset - delta


def _moved(span: Span, edits: list[_Edit]) -> Span:
    """``span`` of the text before ``edits`` in the text after them."""
    return Span(_map(span.start, edits, False), _map(span.end, edits, True))


def _serious(analysis: DocumentAnalysis) -> list[Diagnostic]:
    return [d for d in analysis.diagnostics if d.severity <= Severity.WARNING]


def _verify(
    before: DocumentAnalysis, after: DocumentAnalysis, edits: list[_Edit]
) -> tuple[str | None, dict[_Edit, str]]:
    """``(None, {})`` when ``after`` (the text with ``edits``) passes at every edit and is nowhere worse.

    Worse: an error or warning the text before did not have, or a check or problem
    that no longer passes, even one whose diagnostic is suppressed or switched off.
    Otherwise the reason, and the edits whose own check would not pass, with why.
    """
    edits = sorted(edits, key=lambda edit: edit[0])
    blamed: dict[_Edit, str] = {}
    delta = 0
    for span, new in edits:
        at = Span(span.start + delta, span.start + delta + len(new))
        delta += len(new) - (span.end - span.start)
        checks = [c for c in after.checks if c.span.start < at.end and at.start < c.span.end]
        failing = next((c for c in checks if c.status != "pass"), None)
        if not checks:
            blamed[(span, new)] = f"'{new}' would no longer be read as a claim"
        elif failing is not None:
            blamed[(span, new)] = f"the check would still not pass: {failing.message}"
    if blamed:
        return "a fixed check would not pass", blamed
    old = Counter((d.code, d.severity, _moved(d.span, edits)) for d in _serious(before))
    for diagnostic in _serious(after):
        key = diagnostic.code, diagnostic.severity, diagnostic.span
        if old[key]:
            old[key] -= 1
            continue
        line = after.index.position(diagnostic.span.start)[0] + 1
        return f"it would add {diagnostic.code} on line {line}: {diagnostic.message}", {}
    statuses = {(c.kind, _moved(c.span, edits)): c.status for c in before.checks}
    for check in after.checks:  # those at the edits pass (above)
        if check.status != "pass" and statuses.get((check.kind, check.span)) != check.status:
            line = after.index.position(check.span.start)[0] + 1
            return f"the check on line {line} would become {check.status}: {check.message}", {}
    problems = {_moved(p.title_span, edits): p.status for p in before.problems}
    for problem in after.problems:
        if problem.status == "fail" and problems.get(problem.title_span) != "fail":
            return f"{problem.ident} would fail", {}
    return None, {}


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff from ``old`` to ``new`` (``--- a/path``, ``+++ b/path``), or ``""`` when equal.

    Lines are split at ``\\n`` only, so a CRLF line keeps its ``\\r`` (as ``git diff``
    shows it); a last line with no newline is followed by ``\\ No newline at end of file``.
    """
    if old == new:
        return ""
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), f"a/{path}", f"b/{path}", lineterm="\n"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)
