"""Hover text: derivations, check verdicts, chip fields and formulas, as Markdown."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scaling_core.document.derivation import check_derivation, code, derivation_at, escape, show
from scaling_core.document.lookup import (
    SpanIndex,
    bindings_index,
    checks_index,
    definitions_by_name,
    move_into_place,
    references_index,
    values_index,
)
from scaling_core.document.results import CheckResult, CheckStatus, DocumentAnalysis
from scaling_core.formulas import LIBRARY
from scaling_core.queries.assist import field_documentation
from scaling_core.queries.coverage import covering_unless_stopped
from scaling_core.queries.coverage_model import Concept
from scaling_core.queries.coverage_views import tested_by
from scaling_core.queries.navigation import binding_at
from scaling_core.units.arrays import is_array
from scaling_core.units.display import format_computed, format_quantity
from scaling_core.units.quantity import Quantity

_WORD = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)?")
_VERDICTS = {
    CheckStatus.PASS: "passes",
    CheckStatus.FAIL: "fails",
    CheckStatus.WARN: "needs a unit",
    CheckStatus.SKIP: "was not evaluated",
}


def hover_at(
    analysis: DocumentAnalysis, offset: int, tested: Callable[[int], Concept | None] | None = None
) -> str | None:
    """Markdown for the hover at ``offset``, or None when there is nothing to say.

    With ``tested`` (the coverage concept of the definition whose name starts
    at an offset, asked for only when needed: ``coverage.definition_coverage``,
    or a lookup in coverage already computed), the hover on a definition of
    this draft also says which problems test it.
    """
    word = _word_at(analysis.text, offset)
    if word is not None:
        text = _chip_field(analysis, word) or _formula(word) or _measured(analysis, word, offset)
        if text:
            return text
    check = checks_index(analysis).first_holding(offset)
    if check is not None:
        return _check(analysis, check)
    binding = binding_at(analysis, offset)
    if binding is not None and binding.path == analysis.path:
        derivation = derivation_at(analysis, binding.start)
        concept = tested(binding.start) if tested is not None else None
        if concept is not None:
            derivation = f"{derivation.rstrip()}\n\n---\n\n{tested_by(concept)}\n" if derivation else tested_by(concept)
        if derivation:
            return derivation
    if binding is not None:
        return f"**{code(f'{binding.name} = {binding.source}')}** = **{show(binding.value)}**\n\nDefined in {binding.path}.\n"
    return derivation_at(analysis, offset)


def prepare_hover(analysis: DocumentAnalysis, go_on: Callable[[], bool] | None = None) -> bool:
    """Build ahead what the first hover on ``analysis`` would: the indexes of its values, checks, definitions
    and references, and which problems cover what (each kept with the analysis, built once).

    The editor calls this when the author stops typing, so that a hover then
    answers from what is built (on 10,000 lines, ~25 ms of building otherwise).
    ``go_on`` is asked between the parts and inside them, every few ms of work
    (a few thousand items moved, a block sorted, a slice of problems walked):
    once it says no (the draft changed), the rest is left to the first hover,
    and the keystroke's analysis waits for one slice, not for a whole part.
    True when everything was built.
    """
    ask = go_on if go_on is not None else _always
    for build in _HOVER_READS:
        if not ask() or build(analysis, ask) is False:
            return False
    return True


def _always() -> bool:
    return True


#: A part of :func:`prepare_hover`: it asks its second argument (``go_on``) along the way, and returns False
#: when told to stop.
_Part = Callable[[DocumentAnalysis, Callable[[], bool]], object]


def _every_block(index: Callable[[DocumentAnalysis], SpanIndex[Any]]) -> _Part:
    """Build ``index`` and sort each of its blocks, asking ``go_on`` between blocks (a 1.2 M-character draft of
    30,000 checks: ~40 ms for all its blocks, which an edit meanwhile no longer waits for)."""
    return lambda analysis, go_on: index(analysis).prepare(go_on)


def _whole(build: Callable[[DocumentAnalysis], object]) -> _Part:
    """A part built at once (``go_on`` is not asked inside it: at most ~1 ms on 10,000 lines)."""
    return lambda analysis, _go_on: build(analysis)


#: What :func:`hover_at` reads of an analysis, built once per analysis on first use.  Every value, check and
#: reference is moved into place first (as reading them whole would, a slice at a time), so that which problems
#: cover what and the indexes after it read and sort them without moving them.
_HOVER_READS: tuple[_Part, ...] = (
    move_into_place, covering_unless_stopped, _whole(definitions_by_name), _every_block(values_index),
    _every_block(checks_index), _every_block(bindings_index), _every_block(references_index),
)  # fmt: skip


def _word_at(text: str, offset: int) -> str | None:
    start = max(0, offset - 64)
    for match in _WORD.finditer(text, start, min(len(text), offset + 64)):
        if match.start() <= offset <= match.end():
            return match.group()
    return None


def _chip_field(analysis: DocumentAnalysis, word: str) -> str | None:
    chip_name, _, field = word.partition(".")
    record = analysis.records.get(chip_name)
    if record is None:
        return None
    if not field:
        rows = [f"| `{name}` | {format_quantity(value, 4)} |" for name, value in record.fields.items()]
        return f"**{record.name}**: {record.title}\n\n| field | value |\n|---|---|\n" + "\n".join(rows) + "\n"
    if field not in record.fields:
        return None
    note = f"\n\nNote: {escape(record.notes[field])}" if field in record.notes else ""
    meaning = field_documentation(field)
    written = f" (written {code(record.texts[field])})" if field in record.texts else ""
    return (f"**`{word}`** = **{format_quantity(record.fields[field], 4)}**{written}\n\n{meaning}\n\n"
            f"Source: {record.sources.get(field, '')}{note}\n")  # fmt: skip


def _measured(analysis: DocumentAnalysis, word: str, offset: int) -> str | None:
    """On a ``measure_*`` call's name: what the measurement cache has for it (``queries/measured.py``)."""
    if not word.startswith("measure"):
        return None
    from scaling_core.queries.measured import measurement_hover  # only for drafts that measure

    return measurement_hover(analysis, offset)


def _formula(word: str) -> str | None:
    formula = LIBRARY.get(word)
    if formula is None:
        return None
    return f"**`{formula.signature}`**\n\n{formula.doc}\n\n    {formula.body}\n\nSource: {formula.source}\n"


def _check(analysis: DocumentAnalysis, check: CheckResult) -> str:
    """A check's verdict, its numbers, and how its computed value was derived."""
    verdict = _VERDICTS[check.status]
    lines = [f"**Check {verdict}**: {code(f'{check.op} {check.claim}')}", ""]
    if check.computed is not None:
        lines.append(f"- computed: {format_computed(check.computed, check.claimed, 6)}")
    if check.claimed is not None:
        lines.append(f"- claimed: {format_quantity(check.claimed, 6)} ({code(check.claim)})")
    computed, claimed = check.computed, check.claimed
    if computed is not None and claimed is not None and computed.dim == claimed.dim and not is_array(computed.value):
        difference = Quantity(float(computed.value) - float(claimed.value), claimed.dim)
        relative = abs(float(computed.value) / float(claimed.value) - 1) if claimed.value else 0.0
        lines.append(f"- difference: {format_quantity(difference, 3)} ({relative:.1%})")
    if check.allowance is not None and check.claimed is not None and check.op in ("=", "==", "≈", "~="):
        below, above = (format_quantity(Quantity(x, check.claimed.dim), 2) for x in check.allowance)
        lines.append(f"- tolerance: −{below} / +{above}")
    lines += ["", escape(check.message)]
    derivation = check_derivation(analysis, check)
    if derivation:
        lines += ["", "---", "", derivation.rstrip()]
    return "\n".join(lines) + "\n"
