"""Moving results by an offset: everything that says "the same thing, ``delta`` further on".

Incremental analysis reuses what an earlier version computed: a chunk's scan
(regions, diagnostics, problem markers) and a region's effects (values,
checks, definitions, references, diagnostics).  Text typed above them moves
them; these functions make the moved copies.  They are the hot path of a
keystroke near the top of a long draft, hence the hand-written copies below
instead of :func:`dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from typing import TypeVar

from scaling_core.diagnostics import Diagnostic, Fix, Related
from scaling_core.document.pieces import CalcPiece
from scaling_core.document.regions import (
    CalcRegion,
    ChunkScan,
    ClaimRegion,
    CodeSpanRegion,
    MathRegion,
    PythonRegion,
    Region,
    Suppression,
)
from scaling_core.document.results import Binding, CheckResult, Reference, ValueResult
from scaling_core.text import Span, new_span

_T = TypeVar("_T")
_set = object.__setattr__


def shift_span(span: Span, delta: int) -> Span:
    """``span`` moved by ``delta``."""
    return new_span(Span, (span[0] + delta, span[1] + delta))


def moved(item: _T, **changes: object) -> _T:
    """``dataclasses.replace`` for our frozen dataclasses, without re-running ``__init__``.

    Shifting every result after the edit point is the hot path of a keystroke
    (measured: ``dataclasses.replace`` took ~60% of re-analysing 10,000 lines
    after typing near the top); a shallow copy with some fields changed is ~4x
    cheaper.  Only for moving spans, which keeps every field's invariant.
    """
    new = object.__new__(type(item))
    state = getattr(item, "__dict__", None)
    if state is not None:
        fields = state.copy()
        fields.update(changes)
        _set(new, "__dict__", fields)
        return new
    for name in type(item).__slots__:  # type: ignore[attr-defined]
        object.__setattr__(new, name, changes[name] if name in changes else object.__getattribute__(item, name))
    return new


def shift_diagnostic(item: Diagnostic, delta: int) -> Diagnostic:
    """A diagnostic with every span moved by ``delta``."""
    return moved(
        item,
        span=shift_span(item.span, delta),
        related=tuple(Related(shift_span(r.span, delta), r.message) for r in item.related) if item.related else (),
        fixes=tuple(Fix(f.title, shift_span(f.span, delta), f.text) for f in item.fixes) if item.fixes else (),
    )


# -- a region's recorded effects -------------------------------------------------
_object_new = object.__new__


def move_value(delta: int, value: ValueResult) -> ValueResult:
    """A replayed value moved by ``delta``."""
    return ValueResult(value.start + delta, value.length, value.display_as, value.quantity, value.name,
                       value.inline, value.written)  # fmt: skip


def move_reference(delta: int, recorded: tuple[Reference, Binding | None]) -> Reference:
    """A replayed reference moved by ``delta``, pointing at the binding it resolves to now."""
    reference, binding = recorded
    return reference.moved(delta, binding)


def move_check(delta: int, check: CheckResult) -> CheckResult:
    """A replayed check moved by ``delta``."""
    return CheckResult(check.kind, check.start + delta, check.length, check.status, check.op, check.claim,
                       check.computed, check.text, check.problem, check.claimed, check.allowance, check.left)  # fmt: skip


def move_bindings(delta: int, bindings: tuple[Binding, ...]) -> tuple[Binding, ...]:
    """A replayed region's definitions moved by ``delta``."""
    return tuple(move_each(zip(bindings, repeat(0)), delta))


def move_each(moves: Iterable[tuple[Binding, int]], further: int = 0) -> list[Binding]:
    """Definitions, each moved by its own distance plus ``further`` (0: kept as it is), in one loop: typing
    near the top of a 20 MB draft moves ~87,000 of them per keystroke."""
    moved = []
    for binding, delta in moves:
        delta += further
        if not delta:
            moved.append(binding)
            continue
        stop = binding.stop
        moved.append(Binding(binding.name, binding.value, binding.start + delta, None if stop is None else stop + delta,
                             binding.path, binding.written, binding.source, binding.fingerprint))  # fmt: skip
    return moved


# -- a chunk's scan ----------------------------------------------------------------
def shift_region(region: Region | PythonRegion, delta: int) -> Region | PythonRegion:
    """A region found in a chunk, moved by ``delta``."""
    # Positional constructors and exact type tests: this runs for every region after a keystroke.
    if type(region) is CodeSpanRegion:
        return CodeSpanRegion(region.start + delta, region.length, region.content_offset, region.text, region.role)
    if type(region) is CalcRegion:
        if type(region.content) is str:  # its lines as written: only where they start moves
            return CalcRegion(shift_span(region.span, delta), region.content, region.hidden, region.first + delta)
        lines = tuple([(offset + delta, text) for offset, text in region.lines])
        return CalcRegion(shift_span(region.span, delta), lines, region.hidden, -1)
    if isinstance(region, CalcPiece):  # a piece walked as a chunk of its own (``piece_chunks.py``)
        lines = tuple([(offset + delta, text) for offset, text in region.lines])
        following = region.following + delta if region.following is not None else None
        return CalcPiece(shift_span(region.span, delta), lines, region.hidden, -1, following, region.contiguous)
    if type(region) is ClaimRegion:  # its parts lie where they did from its start
        return ClaimRegion(region.start + delta, region.number_text, region.unit_from, region.unit_to, region.op,
                           region.op_from, region.expr_text, region.expr_from, region.marker_from,
                           region.marker_to)  # fmt: skip
    if type(region) is MathRegion:
        return MathRegion(shift_span(region.span, delta), region.content_offset, region.text)
    assert type(region) is PythonRegion
    return PythonRegion(shift_span(region.span, delta), shift_span(region.info_span, delta))


def shift_regions(scan: ChunkScan, delta: int) -> list[Region]:
    """A chunk's regions as if the chunk started at ``delta``."""
    if delta == 0:
        return scan.regions
    return [shift_region(r, delta) for r in scan.regions]  # type: ignore[misc]


def shift_scan(scan: ChunkScan, delta: int, *, regions: bool = True) -> ChunkScan:
    """A chunk's scan as if the chunk started at ``delta`` (without its regions unless ``regions``).

    Typing near the top of a draft places every chunk below again (``ChunkCache.placed``): 1,377 of them on
    10,000 lines.  Most fields of most chunks are empty, so a field is shifted only if it holds something, and
    the copy's fields are set at once: 2.7-2.9 -> 1.5-1.7 µs a chunk (``tests/core/test_shift.py`` checks every field).
    """
    if delta == 0 and regions:
        return scan
    python_blocks, diagnostics, headings = scan.python_blocks, scan.diagnostics, scan.headings
    bold, problems, margin, answers, suppressions = (
        scan.bold_starts, scan.problem_marks, scan.margin_marks, scan.answer_marks, scan.calc_suppressions
    )  # fmt: skip
    new = _object_new(ChunkScan)
    _set(new, "__dict__", {
        "regions": shift_regions(scan, delta) if regions else [],
        "python_blocks": [shift_region(p, delta) for p in python_blocks] if python_blocks else [],
        "diagnostics": [shift_diagnostic(d, delta) for d in diagnostics] if diagnostics else [],
        "headings": [(offset + delta, level) for offset, level in headings] if headings else [],
        "bold_starts": [moved(p, offset=p.offset + delta, title_span=shift_span(p.title_span, delta))
                        for p in bold] if bold else [],
        "problem_marks": [(kind, shift_span(span, delta), ident) for kind, span, ident in problems] if problems else [],
        "margin_marks": [(kind, shift_span(span, delta), codes) for kind, span, codes in margin] if margin else [],
        "open_at_end": scan.open_at_end,
        "answer_marks": [(opens, offset + delta) for opens, offset in answers] if answers else [],
        "calc_suppressions": [Suppression(shift_span(x.span, delta), x.codes, x.start + delta, x.end + delta)
                              for x in suppressions] if suppressions else [],
        "starts": None,
        "names": {},
    })  # fmt: skip
    return new
