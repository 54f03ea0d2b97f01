"""What a published page shows: inline roles with their values, calc blocks with theirs.

``margin render`` and the publishing plugins (docs/publishing.md) show what
the editor shows, computed here once:

* every ``{calc}`expr``` role with its value, or the reason it has none;
* every calc block with each statement's value, or its check's verdict, as a
  trailing comment (``# = 22.5 days``, ``# ✓``), the text an inlay hint shows.

Nothing here is written by hand into a draft, so nothing goes stale: the
annotations are made from the analysis each time a page is built.
"""

from __future__ import annotations

from scaling_core.diagnostics import Severity
from scaling_core.document.extract import extract
from scaling_core.document.regions import CalcRegion, CodeSpanRegion, Region
from scaling_core.document.results import CheckKind, CheckResult, CheckStatus, DocumentAnalysis, ValueResult
from scaling_core.records import record
from scaling_core.text import Span

#: Annotations line up at this column at most (longer statements get theirs two spaces after the code).
_ALIGN_LIMIT = 60
_VERDICT = {CheckStatus.PASS: "✓", CheckStatus.FAIL: "✗", CheckStatus.WARN: "⚠", CheckStatus.SKIP: "not checked:"}


@record
class InlineRole:
    """A ``{calc}`expr``` role: its value, or why it has none."""

    span: Span
    expr: str
    value: ValueResult | None
    #: Why there is no value (the first error inside the role), None when there is one.
    reason: str | None


@record
class BlockLine:
    """One content line of a calc block, with what the margin shows after it (None: nothing)."""

    offset: int
    text: str
    note: str | None


@record
class CalcBlock:
    """A calc block (a fence, a ``{calc}`` directive, or a hidden ``<!-- calc`` comment)."""

    span: Span
    hidden: bool
    lines: tuple[BlockLine, ...]

    @property
    def source(self) -> str:
        """The block's content as written (``\\n`` between lines)."""
        return "\n".join(line.text for line in self.lines)

    def annotated_lines(self) -> list[str]:
        """The content lines as published: each note a trailing comment, aligned within the block."""
        noted = [len(_code_part(line.text).rstrip()) for line in self.lines if line.note is not None]
        column = min(max(noted, default=0), _ALIGN_LIMIT) + 2
        return [_annotate(line.text, line.note, column) for line in self.lines]

    @property
    def rendered(self) -> str:
        """The block's content as published (``\\n`` between lines)."""
        return "\n".join(self.annotated_lines())


def inline_roles(analysis: DocumentAnalysis, regions: list[Region] | None = None) -> list[InlineRole]:
    """Every ``{calc}`` role of the draft in document order, each with its value or the reason it has none."""
    values = {v.span.start: v for v in analysis.values if v.inline}
    found = []
    for region in regions if regions is not None else extract(analysis.text).regions:
        if not isinstance(region, CodeSpanRegion) or not region.role:
            continue
        value = values.get(region.span.start)
        reason = None if value is not None else _reason(analysis, region.span)
        found.append(InlineRole(region.span, region.text, value, reason))
    return found


def calc_blocks(analysis: DocumentAnalysis, regions: list[Region] | None = None) -> list[CalcBlock]:
    """Every calc block in document order, each content line with its value or check verdict."""
    notes = _notes(analysis)
    blocks = []
    for region in regions if regions is not None else extract(analysis.text).regions:
        if not isinstance(region, CalcRegion):
            continue
        lines = []
        for offset, text in region.lines:
            end = offset + len(text)
            noted = [note for position, note in notes if offset <= position <= end]
            lines.append(BlockLine(offset, text, "; ".join(noted) if noted else None))
        blocks.append(CalcBlock(region.span, region.hidden, tuple(lines)))
    return blocks


def roles_and_blocks(analysis: DocumentAnalysis) -> tuple[list[InlineRole], list[CalcBlock]]:
    """:func:`inline_roles` and :func:`calc_blocks` from one reading of the draft."""
    regions = list(extract(analysis.text).regions)
    return inline_roles(analysis, regions), calc_blocks(analysis, regions)


def render_markdown(analysis: DocumentAnalysis, *, block_values: bool = True) -> str:
    """The draft as published: roles replaced by their values and, with ``block_values``, calc fences annotated.

    A role without a value is left as written (``margin render`` reports it and
    exits 1).  Hidden calc comments stay as they are: they are not shown.
    """
    roles, blocks = roles_and_blocks(analysis)
    edits = [(r.span, r.value.display) for r in roles if r.value is not None]
    if block_values:
        for block in blocks:
            if block.hidden:
                continue
            for line, published in zip(block.lines, block.annotated_lines()):
                if published != line.text:
                    edits.append((Span(line.offset, line.offset + len(line.text)), published))
    text = analysis.text
    pieces = []
    position = 0
    for span, replacement in sorted(edits, key=lambda edit: edit[0].start):
        pieces += [text[position : span.start], replacement]
        position = span.end
    pieces.append(text[position:])
    return "".join(pieces)


def _reason(analysis: DocumentAnalysis, span: Span) -> str:
    for diagnostic in analysis.diagnostics:
        if diagnostic.severity is Severity.ERROR and span.start <= diagnostic.span.start < span.end:
            return f"{diagnostic.code}: {diagnostic.message}"
    return "no value (the role is suppressed, or it is inside a region Margin does not evaluate)"


def _notes(analysis: DocumentAnalysis) -> list[tuple[int, str]]:
    """(offset of a statement's end, what the margin shows there) for calc statements and checks."""
    notes = [(v.span.end, f"= {v.display}") for v in analysis.values if not v.inline]
    notes += [(c.span.end, _verdict(c)) for c in analysis.checks if c.kind is CheckKind.CALC]
    notes.sort(key=lambda note: note[0])
    return notes


def _verdict(check: CheckResult) -> str:
    mark = _VERDICT[check.status]
    return mark if check.status is CheckStatus.PASS else f"{mark} {check.message}"


def _code_part(text: str) -> str:
    """A calc line without its ``#`` comment (a ``#`` inside a quoted string is not one)."""
    quoted = False
    for position, character in enumerate(text):
        if character == '"':
            quoted = not quoted
        elif character == "#" and not quoted:
            return text[:position]
    return text


def _annotate(text: str, note: str | None, column: int) -> str:
    """``text`` with ``note`` as a trailing comment at ``column``; an author's comment follows the note."""
    if note is None:
        return text
    code = _code_part(text).rstrip()
    comment = text[len(_code_part(text)) :].lstrip("#").strip()
    padding = " " * max(column - len(code), 2)
    return f"{code}{padding}# {note}" + (f" · {comment}" if comment else "")
