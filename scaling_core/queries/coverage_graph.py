"""What coverage reads from one analysis: concepts, what each definition and check uses, headings.

A *node* of the dependency graph is a definition (``("def", path, offset)``),
a chip field used in a file (``("field", path, "h100.hbm_bw")``) or a library
formula called in a file (``("formula", path, "allgather_time")``): a problem
covers a file's chip fields and formulas only through that file's text.  The edges come from the analysis itself:
the references it resolved inside each definition and check, plus the chip
fields and formula calls written there.  Nothing is evaluated again.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import cached_property
from operator import attrgetter

from scaling_core.document.lookup import bindings_index, named_value_at, references_index
from scaling_core.document.results import Binding, CheckKind, CheckResult, CheckStatus, DocumentAnalysis, Reference
from scaling_core.formulas import LIBRARY
from scaling_core.records import record
from scaling_core.text import Span

Node = tuple[str, ...]

#: A chip name's continuation: optional slice index, then ``.field``.
_FIELD = re.compile(r'((?:\s*\[\s*"[^"\n]*"\s*\])*)\s*\.\s*([^\W\d]\w*)')
_INDEX = re.compile(r'((?:\s*\[\s*"[^"\n]*"\s*\])+)')
_CALL = re.compile(r"(?<![\w.])([^\W\d]\w*)\s*\(")
#: Block-quote and list-item marks before a heading's text.
_CONTAINER = re.compile(r"[ \t]*(?:(?:>[ \t]?|(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$))[ \t]*)*")
_ATX = re.compile(r"#{1,6}(?:[ \t]+(.*)|[ \t]*$)")
#: An ATX heading's optional closing sequence: spaces, then ``#`` to the end (or the whole content).
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
#: ``<!-- tests: name, other -->``: the concepts a problem declares it tests.
TESTS_MARK = re.compile(r"<!--\s*tests\s*:(.*?)-->", re.S)


def binding_node(binding: Binding) -> Node:
    """The graph node of a definition."""
    return ("def", binding.path, str(binding.start))


@record
class Heading:
    """A Markdown heading: its level, title and the span of its line."""

    level: int
    title: str
    span: Span


def headings(analysis: DocumentAnalysis) -> list[Heading]:
    """Every ATX or setext heading, in order, as the analysis found them (none inside fences or HTML blocks)."""
    index, text = analysis.index, analysis.text
    found = []
    for start, level in analysis.headings:
        end = index.line_end_at(start)
        found.append(Heading(level, _title(text[start:end]), Span(start, max(start, end))))
    return found


def _title(line: str) -> str:
    """A heading's title from the text of its (first) line: no container marks, no ``#`` sequences."""
    content = _CONTAINER.sub("", line, count=1)
    atx = _ATX.match(content)
    if atx is None:  # setext: the line is the title
        return content.strip()
    return _ATX_CLOSE.sub("", atx.group(1).strip()).strip()


class FileGraph:
    """One analysis seen as a graph: what each definition and each check uses.

    Made for the whole draft (coverage of every concept), it sorts every reference once and keeps every
    statement; ``windowed``, it reads only the places asked about, through the analysis's indexes (which
    problems may test one definition, right after an edit: see ``coverage.definition_coverage``).
    """

    def __init__(self, analysis: DocumentAnalysis, windowed: bool = False) -> None:
        self.analysis = analysis
        self.text = analysis.text
        self._windowed = windowed
        self.references: list[Reference] = []
        self._starts: list[int] = []
        self._statements: dict[int, Span] = {}
        self._definitions: dict[int, Binding] | None = None
        if not windowed:
            self.references = sorted(analysis.references, key=attrgetter("start"))
            self._starts = [r.start for r in self.references]
            self._statements = {v.span.start: v.span for v in analysis.values if v.name is not None}

    # -- what a span of text uses ---------------------------------------------
    def uses(self, span: Span) -> Iterator[tuple[Node, str, int]]:
        """The nodes used inside ``span``: (node, name as written, offset): the definitions its names resolved
        to, then what :meth:`outside_uses` finds."""
        for reference in self._inside(span):
            if reference.binding is not None:
                yield binding_node(reference.binding), reference.name, reference.start
        yield from self.outside_uses(span)

    def outside_uses(self, span: Span) -> Iterator[tuple[Node, str, int]]:
        """The chip fields and library formulas used inside ``span`` (what it uses that is not a definition)."""
        records, path = self.analysis.records, self.analysis.path
        if not self._windowed:  # a chip is named in few places: most spans have no reference to look at
            chips = self._chip_starts
            at = bisect.bisect_left(chips, span.start)
            if at == len(chips) or chips[at] > span.end:
                yield from self._formula_uses(span)
                return
        for reference in self._inside(span):
            if reference.binding is None and reference.name in records:
                found = self._chip_use(reference, span.end)
                if found is not None:
                    yield ("field", path, found), found, reference.start
        yield from self._formula_uses(span)

    @cached_property
    def _chip_starts(self) -> list[int]:
        """Where the references that may name a chip start (unresolved, a chip's name), in order.

        Coverage asks :meth:`outside_uses` of every value and check (30,000 in a dense draft): a span with none
        of them inside needs no walk over its references (the same answer, without them).
        """
        records = self.analysis.records
        return [r.start for r in self.references if r.binding is None and r.name in records]

    def _inside(self, span: Span) -> Iterator[Reference]:
        """The references written wholly inside ``span``, in order."""
        if self._windowed:
            found = references_index(self.analysis).starting_between(span.start, span.end + 1)
            inside = [reference for reference in found if reference.end <= span.end]
            return iter(sorted(inside, key=attrgetter("start")))
        low = bisect.bisect_left(self._starts, span.start)
        high = bisect.bisect_right(self._starts, span.end)
        return (reference for reference in self.references[low:high] if reference.end <= span.end)

    def _formula_uses(self, span: Span) -> Iterator[tuple[Node, str, int]]:
        """The library formulas called inside ``span``."""
        if self.text.find("(", span.start, span.end) < 0:  # no call: most spans, and no slice to make
            return
        piece = self.text[span.start : span.end]
        for match in _CALL.finditer(piece):
            if match.group(1) in LIBRARY:
                yield (
                    ("formula", self.analysis.path, match.group(1)),
                    f"{match.group(1)}()",
                    span.start + match.start(1),
                )

    def _chip_use(self, reference: Reference, limit: int) -> str | None:
        rest = self.text[reference.span.end : limit]
        field = _FIELD.match(rest)
        if field is not None:
            return reference.name + _compact(field.group(1)) + "." + field.group(2)
        index = _INDEX.match(rest)
        return reference.name + _compact(index.group(1)) if index is not None else None

    # -- where things are -------------------------------------------------------
    def defined_at(self, start: int) -> Binding | None:
        """The draft's own definition whose name starts at ``start`` (the last in list order, if several)."""
        path = self.analysis.path
        if self._windowed:
            found = [b for b in bindings_index(self.analysis).starting_between(start, start + 1) if b.path == path]
            return found[-1] if found else None
        if self._definitions is None:
            self._definitions = {b.start: b for b in self.analysis.bindings if b.path == path}
        return self._definitions.get(start)

    def statement(self, binding: Binding) -> Span:
        """The span of the statement that defines ``binding`` (its line when unknown)."""
        if self._windowed:
            value = named_value_at(self.analysis, binding.start)
            found = value.span if value is not None else None
        else:
            found = self._statements.get(binding.start)
        if found is not None:
            return found
        index = self.analysis.index
        return Span(binding.start, index.line_end_at(binding.start))

    def check_reach(self, check: CheckResult) -> Span:
        """The text a check reads: its statement or span, and for a claim its marker too."""
        if check.kind != CheckKind.CLAIM:
            return check.span
        opening = self.text.find("<!--", check.span.end)
        closing = self.text.find("-->", opening) if opening >= 0 else -1
        return Span(check.span.start, closing + 3 if closing >= 0 else check.span.end)

    @cached_property
    def suppressed(self) -> list[tuple[int, int, frozenset[str] | None]]:
        """Where failures are suppressed: ``margin: off`` regions, ignore comments (start, end, codes)."""
        return self.analysis.suppressions

    def counts(self, check: CheckResult) -> bool:
        """Whether a check tests anything: evaluated, and not suppressed (a suppressed check covers nothing)."""
        if check.status == CheckStatus.SKIP:
            return False
        return not any(
            start <= check.span.start <= end and (codes is None or "C001" in codes)
            for start, end, codes in self.suppressed
        )

    def declared(self, problem: Span) -> list[tuple[str, int]]:
        """The names a problem's ``<!-- tests: ... -->`` comments declare, with their offsets."""
        names = []
        for match in TESTS_MARK.finditer(self.text, problem.start, problem.end):
            offset = match.start(1)
            for part in match.group(1).split(","):
                name = part.strip()
                if name:
                    names.append((name, offset + part.index(name[0])))
                offset += len(part) + 1
        return names


def _compact(index: str) -> str:
    return re.sub(r"\s+", "", index)
