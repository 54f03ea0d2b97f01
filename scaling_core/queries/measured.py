"""Editor questions about a draft's ``measure_*`` calls: where they are, what the cache said, the hover.

The engine answers each ``measure_matmul(...)``, ``measure_copy(...)``,
``measure_collective(...)`` and ``measure(f, ...)`` call from the
measurement cache (``measure_calls.py``); what it answered stays in the
analysis, replayed regions included: a T003 (no measurement, or measured on
several devices), T004 (noisy) or T005 (stale) diagnostic at the call, and the
record the call returned (with its provenance in ``sources``).  From those,
:func:`measure_sites` lists the calls with their status (for the "Run
measurement" / "Re-measure" code lenses) and :func:`measurement_hover` says
what was measured: the median, min and p90, the CV, the device, host, date
and method.

A call is listed only where the analysis proves it is calc code (a
statement's value, a check or a diagnostic covers it): text that merely
looks like a call, in prose or a comment, gets no lens.
"""

from __future__ import annotations

import re

from scaling_core.document.results import DocumentAnalysis
from scaling_core.expr.values import Record
from scaling_core.measure_calls import SIGNATURES
from scaling_core.records import record
from scaling_core.text import Span
from scaling_core.units.display import format_quantity

_CALL = re.compile(r"(?<![\w.])(" + "|".join(sorted(SIGNATURES, key=len, reverse=True)) + r")[ \t]*\(")
#: What the cache had for a call: "missing" and "ambiguous" (T003), "stale" (T005), "noisy" (T004), "found".
STATUSES = ("missing", "ambiguous", "stale", "noisy", "found")


@record
class MeasureSite:
    """One ``measure_*`` call of the draft and what the measurement cache said about it."""

    #: The call, from its name to its closing parenthesis.
    span: Span
    name: str
    #: One of :data:`STATUSES`.
    status: str
    #: The diagnostic's message for a call without a verdict ("" when found).
    message: str = ""
    #: The record the call returned (found, stale or noisy), when a definition holds it.
    record: Record | None = None

    @property
    def lens_title(self) -> str:
        """The code lens over the call: run it when it has no measurement, else measure it again."""
        return "▶ Run measurement" if self.status == "missing" else "↻ Re-measure"


def measure_sites(analysis: DocumentAnalysis) -> list[MeasureSite]:
    """Every ``measure_*`` call the analysis evaluated, in document order, with what the cache said."""
    text = analysis.text
    if "measure" not in text:
        return []
    matches = list(_CALL.finditer(text))
    if not matches:
        return []
    said = {d.span.start: d for d in analysis.diagnostics if d.code in ("T003", "T004", "T005")}
    covering = sorted([(v.span.start, v.span.end) for v in analysis.values]
                      + [(c.span.start, c.span.end) for c in analysis.checks]
                      + [(d.span.start, d.span.end) for d in analysis.diagnostics])  # fmt: skip
    records = _records(analysis)
    sites, reach, next_span = [], 0, 0
    for match in matches:
        start = match.start()
        while next_span < len(covering) and covering[next_span][0] <= start:
            reach = max(reach, covering[next_span][1])
            next_span += 1
        if reach <= start:
            continue  # not calc code the analysis evaluated
        span = Span(start, _call_end(text, match.end()))
        status, message = _status(said.get(start))
        if status:
            sites.append(MeasureSite(span, match.group(1), status, message, records.get(text[span.start : span.end])))
    return sites


def site_at(analysis: DocumentAnalysis, offset: int) -> MeasureSite | None:
    """The ``measure_*`` call whose name is at ``offset``, if any."""
    for site in measure_sites(analysis):
        if site.span.start <= offset <= site.span.start + len(site.name):
            return site
    return None


def measurement_hover(analysis: DocumentAnalysis, offset: int) -> str | None:
    """Markdown for the hover on a ``measure_*`` call's name: the samples, CV, device, host, date and method."""
    site = site_at(analysis, offset)
    if site is None:
        return None
    head = f"**{site.name}**"
    if site.status in ("missing", "ambiguous"):
        return f'{head}: {site.message}\n\nRun the code lens "Run measurement" or `margin measure`.\n'
    record = site.record
    if record is None:
        lines = [f"{head}: {site.status}" + (f" ({site.message})" if site.message else "")]
        return "\n\n".join(lines) + "\n\nBind it to a name (`t = ...`) to see its samples here.\n"
    sources = record.sources
    lines = [f"{head} on {sources.get('device', '?')}" + _status_note(site)]
    times = [f"{label} {format_quantity(record.fields[key], 4)}" for key, label in
             (("median", "median"), ("min", "min"), ("p90", "p90")) if key in record.fields]  # fmt: skip
    samples = record.fields.get("samples")
    if times:
        counted = f" over {int(samples.value)} samples" if samples is not None else ""
        lines.append("- " + " · ".join(times) + counted)
    elif samples is not None:
        lines.append(f"- {int(samples.value)} samples; times unknown: {record.unknown.get('median', '')}")
    if "cv" in record.fields:
        lines.append(f"- CV {float(record.fields['cv'].value):.3g}")
    if "compile" in record.fields:
        lines.append(f"- compile {format_quantity(record.fields['compile'], 4)} (not in the times)")
    where = sources.get("device_kind", "")
    if sources.get("host"):
        where += f" on {sources['host']}"
    for label, value in (("device", where), ("date", sources.get("date", "")), ("method", sources.get("method", "")),
                         ("jax", sources.get("jax", ""))):  # fmt: skip
        if value:
            lines.append(f"- {label}: {value}")
    if site.status == "stale":
        lines.append(f"\n{sources.get('measured', '')}")
    return "\n".join(lines) + "\n"


def _status_note(site: MeasureSite) -> str:
    if site.status == "stale":
        return ": **stale** (the call changed since it was measured; its times are unknown)"
    if site.status == "noisy":
        return ": **noisy** (CV above 0.1: its times give no verdict)"
    return ""


def _status(diagnostic: object) -> tuple[str, str]:
    """The site's status from the diagnostic at its start (None: found); "" for a call that cannot be measured."""
    if diagnostic is None:
        return "found", ""
    code, message = getattr(diagnostic, "code", ""), str(getattr(diagnostic, "message", ""))
    if code == "T005":
        return "stale", message
    if code == "T004":
        return "noisy", message
    if "no measurement for" in message:
        return "missing", message.removeprefix("untested: ")
    if "measured on several devices" in message:
        return "ambiguous", message.removeprefix("untested: ")
    return "", message  # untested for another reason (a dtype JAX lacks, a sweep): nothing to measure


def _records(analysis: DocumentAnalysis) -> dict[str, Record]:
    """The measurement records the draft's definitions hold, by the call as written."""
    found: dict[str, Record] = {}
    for binding in analysis.bindings:
        value = binding.value
        if isinstance(value, Record) and value.kind == "measurement" and binding.path == analysis.path:
            found.setdefault(value.sources.get("call", ""), value)
    return found


def _call_end(text: str, position: int) -> int:
    """The offset after the parenthesis closing the call whose ``(`` ends before ``position`` (its line's end if none)."""
    depth = 1
    for index in range(position, len(text)):
        char = text[index]
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth == 0:
                return index + 1
        elif char in "\r\n":
            return index
    return len(text)


__all__ = ["STATUSES", "MeasureSite", "measure_sites", "measurement_hover", "site_at"]
