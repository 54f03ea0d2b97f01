"""Code actions: fix a wrong claim, turn a prose number into a claim, change a display unit."""

from __future__ import annotations

from scaling_core.document.prose import ANY_NUMBER, read_number
from scaling_core.document.results import DocumentAnalysis
from scaling_core.records import record
from scaling_core.text import Span
from scaling_core.units import dimension
from scaling_core.units.quantity import Quantity
from scaling_core.units.registry import default_registry

#: Display units offered for "show in …", by dimension.
_ALTERNATIVES = {
    dimension.pack({"time": 1}): ("us", "ms", "s", "min", "h", "days"),
    dimension.pack({"information": 1}): ("kB", "MB", "GB", "TB", "KiB", "MiB", "GiB"),
    dimension.pack({"information": 1, "time": -1}): ("GB/s", "TB/s"),
    dimension.pack({"computation": 1}): ("FLOP", "TFLOP", "PFLOP"),
    dimension.pack({"computation": 1, "time": -1}): ("TFLOP/s", "PFLOP/s"),
}


@record
class Action:
    """A code action: its title, kind and the text edits it makes."""

    title: str
    kind: str  # "quickfix" or "refactor"
    edits: tuple[tuple[Span, str], ...]
    #: The diagnostic code it fixes, if any.
    fixes: str | None = None
    preferred: bool = False


def code_actions(analysis: DocumentAnalysis, start: int, end: int) -> list[Action]:
    """Actions available for the range ``[start, end]``."""
    actions = [
        Action(fix.title, "quickfix", ((fix.span, fix.text),), diagnostic.code, True)
        for diagnostic in analysis.diagnostics
        if diagnostic.span.start <= end and start <= diagnostic.span.end
        for fix in diagnostic.fixes
    ]
    actions += _claim_actions(analysis, start, end)
    actions += _unit_actions(analysis, start, end)
    return actions


def _claim_actions(analysis: DocumentAnalysis, start: int, end: int) -> list[Action]:
    line_start, line_end = analysis.index.line_start_at(start), analysis.index.line_end_at(end)
    registry = default_registry()
    found = []
    for match in ANY_NUMBER.finditer(analysis.text, line_start, line_end):
        if not (match.start() <= end and start <= match.end()) or analysis.text.startswith("<!--", match.end()):
            continue
        if any(c.span.start <= match.start() < c.span.end for c in analysis.checks):
            continue
        number = read_number(match)
        unit = registry.lookup(number.unit) if number.unit else None
        claimed = Quantity(number.value * (unit.factor if unit else 1.0), unit.dim if unit else 0)
        for binding in reversed(analysis.bindings):
            value = binding.value
            if binding.start < match.start() and isinstance(value, Quantity) and _close(value, claimed):
                marker = f"<!-- ≈ {binding.name} -->"
                found.append(Action(f"Check {match.group()} against {binding.name}", "refactor",
                                    ((Span(match.end(), match.end()), marker),)))  # fmt: skip
                break
    return found


def _close(value: Quantity, claimed: Quantity) -> bool:
    if isinstance(value.value, float) is False or not claimed.value:
        return False
    if value.dim != claimed.dim and not (claimed.dim == 0 and value.dim == 0):
        return False
    return bool(abs(value.value / claimed.value - 1) <= 0.05)


def _unit_actions(analysis: DocumentAnalysis, start: int, end: int) -> list[Action]:
    actions = []
    for value in analysis.values:
        if value.inline or value.quantity is None or not (value.span.start <= end and start <= value.span.end):
            continue
        if (
            "->" in analysis.text[value.span.start : value.span.end]
            or "→" in analysis.text[value.span.start : value.span.end]
        ):
            continue
        for unit in _ALTERNATIVES.get(value.quantity.dim, ()):
            actions.append(
                Action(f"Show in {unit}", "refactor", ((Span(value.span.end, value.span.end), f" -> {unit}"),))
            )
    return actions
