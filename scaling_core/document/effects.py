"""Effects: everything evaluating one region produces, as one value.

``Interpreter.evaluate(region, scope)`` returns a region's :class:`Effects`
(diagnostics, values, checks, definitions, references, imports) and changes
nothing else; ``Interpreter.apply(effects, delta)`` adds them to the results
and the scope.  Between the two, the region cache may keep them: a later
analysis that meets the same region with the same inputs applies the kept
effects again, ``delta`` further on, instead of evaluating it.

While a region is evaluated, a :class:`Recording` collects what it produces
(and turns check outcomes into results, as :class:`CheckReporting`); the
document's :class:`Results` are what every region's applied effects add up to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from scaling_core.diagnostics import Diagnostic
from scaling_core.document.regions import ChunkScan, ClaimRegion, CodeSpanRegion, Region
from scaling_core.document.results import Binding, CheckResult, CheckStatus, Reference, ValueResult
from scaling_core.document.segments import Segments, span_bounds
from scaling_core.document.shift import (
    move_bindings,
    move_check,
    move_reference,
    move_value,
    shift_diagnostic,
)
from scaling_core.document.verdicts import CheckReporting

if TYPE_CHECKING:
    from scaling_core.document.forward import Waiting

#: A check status whose diagnostic a suppression may hide.
_FAILING = (CheckStatus.FAIL, CheckStatus.WARN)


#: ``segments.span_bounds`` of some results, flat (none: no results).
Bounds = tuple[int, ...]


class Imported(NamedTuple):
    """An ``import`` met in a region: its target and the names it brought in (none if it failed)."""

    path: str
    names: Mapping[str, Binding]
    #: How many of the region's own definitions came before it (the order the scope sees them in).
    after: int


@dataclass(slots=True)
class Effects:
    """What evaluating one region produced, and where the region started (never changed once made)."""

    start: int
    diagnostics: tuple[Diagnostic, ...]
    values: tuple[ValueResult, ...]
    checks: tuple[CheckResult, ...]
    bindings: tuple[Binding, ...]
    references: tuple[Reference, ...]
    imports: tuple[Imported, ...] = ()
    #: Sweep elements the region computed (a replay spends them again from the analysis's budget).
    elements: int = 0
    _owners: tuple[int | None, ...] | None = field(default=None, init=False, repr=False, compare=False)
    _check_facts: tuple[int, int, bool, tuple[int, ...]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _bounds: tuple[Bounds, Bounds, Bounds] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def owners(self) -> tuple[int | None, ...]:
        """For each reference, the index of the region's own definition it resolved to, or None if outside.

        Replaying re-resolves the others against the scope of the day; only
        replayed effects need this, so it is worked out on the first replay.
        """
        owners = self._owners
        if owners is None:
            owners = self._owners = owners_of(self.bindings, self.references)
        return owners

    def prepare_replay(self) -> None:
        """Work out now what a replay reads (:attr:`owners`, :attr:`check_facts`), not on the first replay."""
        self.owners  # noqa: B018 - worked out and kept
        self.bounds  # noqa: B018 - worked out and kept
        if self.checks:
            self.check_facts  # noqa: B018 - worked out and kept

    @property
    def check_facts(self) -> tuple[int, int, bool, tuple[int, ...]]:
        """Of its checks (at least one): the first start, the largest start, whether they are in order of
        start, and the positions of the failing ones (FAIL or WARN).  Worked out once (for two checks or more)."""
        facts = self._check_facts
        if facts is None:
            checks = self.checks
            facts = check_facts(checks, [check.start for check in checks])
            if len(checks) > 1:  # one check's are made again when asked: kept, they took ~2.4 MB of a 20 MB draft
                self._check_facts = facts
        return facts

    @property
    def bounds(self) -> tuple[Bounds, Bounds, Bounds]:
        """``segments.span_bounds`` of its values, checks and references: a replay passes them on to
        ``Segments.add_moved``.  Worked out once."""
        bounds = self._bounds
        if bounds is None:
            bounds = self._bounds = (results_bounds(self.values), results_bounds(self.checks),
                                     results_bounds(self.references))  # fmt: skip
        return bounds

    @property
    def replayable(self) -> bool:
        """Whether a later analysis may apply these effects again instead of evaluating the region.

        Not when the region imports (the imported draft may have changed by
        then).  An unknown name's did-you-mean note is added after the
        analysis (``names.suggest_names``), so its N001 replays like any diagnostic.
        """
        return not self.imports


class Recording(CheckReporting):
    """What the region being evaluated has produced so far; :meth:`effects` takes it out as its effects.

    The interpreter keeps one and reuses it region after region (fewer
    objects per region for the cyclic collector to follow).
    """

    __slots__ = ("problem", "diagnostics", "values", "checks", "bindings", "references", "imports")

    def __init__(self, problem: str | None = None) -> None:
        #: The problem the region is in (checks carry it).
        self.problem = problem
        self.diagnostics: list[Diagnostic] = []
        self.values: list[ValueResult] = []
        self.checks: list[CheckResult] = []
        self.bindings: list[Binding] = []
        self.references: list[Reference] = []
        self.imports: list[Imported] = []

    def marks(self) -> tuple[int, int, int]:
        """How many diagnostics, checks and references the region has so far (for :meth:`move_since`)."""
        return len(self.diagnostics), len(self.checks), len(self.references)

    def move_since(self, marks: tuple[int, int, int], delta: int) -> None:
        """Move what was recorded since ``marks`` by ``delta``: a code span checked where its text was first read."""
        diagnostics, checks, references = marks
        if len(self.diagnostics) > diagnostics:
            self.diagnostics[diagnostics:] = [shift_diagnostic(d, delta) for d in self.diagnostics[diagnostics:]]
        if len(self.checks) > checks:
            self.checks[checks:] = [move_check(delta, c) for c in self.checks[checks:]]
        if len(self.references) > references:
            self.references[references:] = [move_reference(delta, (r, r.binding)) for r in self.references[references:]]

    def effects(self, start: int, elements: int = 0) -> Effects:
        """The effects recorded, for a region that starts at ``start`` (having computed ``elements`` sweep
        elements); the recording is empty again after."""
        diagnostics, values, checks = self.diagnostics, self.values, self.checks
        bindings, references, imports = self.bindings, self.references, self.imports
        # Written out, testing before each call: this runs for every region evaluated.
        effects = Effects(
            start,
            tuple(diagnostics) if diagnostics else (),
            tuple(values) if values else (),
            tuple(checks) if checks else (),
            tuple(bindings) if bindings else (),
            tuple(references) if references else (),
            tuple(imports) if imports else (),
            elements,
        )
        if diagnostics:
            diagnostics.clear()
        if values:
            values.clear()
        if checks:
            checks.clear()
        if bindings:
            bindings.clear()
        if references:
            references.clear()
        if imports:
            imports.clear()
        return effects


@dataclass
class Results:
    """What the effects applied so far add up to, in document order."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    values: Segments[ValueResult] = field(default_factory=Segments)
    #: Moved into place when first read, like values: most analyses read only the failing ones.
    checks: Segments[CheckResult] = field(default_factory=Segments)
    bindings: list[Binding] = field(default_factory=list)
    references: Segments[Reference] = field(default_factory=Segments)
    #: The targets of the ``import`` statements met, in order.
    imports: list[str] = field(default_factory=list)
    #: Whether the checks were added in order of start (claims that waited for names below come last),
    #: where the failing ones (FAIL or WARN) are among them, and the largest start so far.
    checks_in_order: bool = True
    failing: list[int] = field(default_factory=list)
    last_check: int = -1

    def add(self, effects: Effects, delta: int, resolve: Callable[[str], Binding | None] | None) -> tuple[Binding, ...]:
        """Add a region's effects, ``delta`` further on than recorded; returns its definitions as added.

        ``resolve`` is None for effects just evaluated, which go in as they
        are.  A replayed region's references are re-resolved with it (its own
        definitions aside); its definitions, checks and diagnostics are moved
        now (scopes and publishing read them), its values, checks and
        references when first read (:class:`Segments`).
        """
        bindings = effects.bindings
        references = effects.references
        if resolve is None:
            if references:
                self.references.extend(references)
        else:
            if delta and bindings:
                bindings = move_bindings(delta, bindings)
            if references:
                resolved = [bindings[owner] if owner is not None else resolve(reference.name)
                            for reference, owner in zip(references, effects.owners)]  # fmt: skip
                self.references.add_moved(tuple(zip(references, resolved)), move_reference, delta,
                                          bounds=effects.bounds[2])  # fmt: skip
        # Most regions add few kinds of thing: test before each call (this runs for every region of every analysis).
        if effects.diagnostics:
            self.diagnostics.extend(
                [shift_diagnostic(d, delta) for d in effects.diagnostics] if delta else effects.diagnostics
            )
        if effects.values:
            if delta:
                self.values.add_moved(effects.values, move_value, delta, bounds=effects.bounds[0])
            else:
                self.values.extend(effects.values)
        if effects.checks:
            facts = effects.check_facts
            self.count_checks(facts, delta)
            if delta:
                keys = (facts[0] + delta, facts[1] + delta)
                self.checks.add_moved(effects.checks, move_check, delta, keys, _as_recorded, effects.bounds[1])
            else:
                self.checks.extend(effects.checks)
        if bindings:
            self.bindings.extend(bindings)
        if effects.imports:
            self.imports.extend(imported.path for imported in effects.imports)
        return bindings

    def count_checks(self, facts: tuple[int, int, bool, tuple[int, ...]], delta: int) -> None:
        """Before checks are added, ``delta`` on from where recorded: note whether they keep the checks in
        order, the largest start, and where the failing ones will be (``facts``: ``check_facts``'s)."""
        first, last, in_order, failing = facts
        if self.checks_in_order and (not in_order or first + delta < self.last_check):
            self.checks_in_order = False
            self.checks.close_part()  # those so far are read as in order (``sorted_on_read.py``)
        self.last_check = max(self.last_check, last + delta)
        if failing:
            count = len(self.checks)
            self.failing.extend([count + n for n in failing])


def moved_effects(effects: Effects, delta: int) -> Effects:
    """``effects`` as recorded ``delta`` further on, every item moved now: effects replayed from there again move
    nothing (a run above an edit lies where it was replayed last, not where it was recorded)."""
    bindings = move_bindings(delta, effects.bindings)
    owners = effects.owners
    references = tuple([move_reference(delta, (r, bindings[owner] if owner is not None else r.binding))
                        for r, owner in zip(effects.references, owners)])  # fmt: skip
    moved = Effects(
        effects.start + delta, tuple([shift_diagnostic(d, delta) for d in effects.diagnostics]),
        tuple([move_value(delta, v) for v in effects.values]), tuple([move_check(delta, c) for c in effects.checks]),
        bindings, references, effects.imports, effects.elements,
    )  # fmt: skip
    # Moving changes neither which own definition a reference names nor the checks' order: carried over,
    # not worked out again on the next replay.
    moved._owners = owners
    if effects._check_facts is not None:
        first, last, in_order, failing = effects._check_facts
        moved._check_facts = (first + delta, last + delta, in_order, failing)
    return moved


def results_bounds(items: Sequence[ValueResult | CheckResult | Reference], at: Sequence[int] | None = None) -> Bounds:
    """``segments.span_bounds`` of ``items``' spans, each ``at`` further on if given."""
    if not items:
        return ()
    if at is None:
        return span_bounds([item.start for item in items], [item.end for item in items])
    return span_bounds([item.start + delta for item, delta in zip(items, at)],
                       [item.end + delta for item, delta in zip(items, at)])  # fmt: skip


def owners_of(bindings: Sequence[Binding], references: Sequence[Reference]) -> tuple[int | None, ...]:
    """For each of ``references``, the index of the one of ``bindings`` it resolved to, or None.

    Most regions' references all resolve outside them: their owners are one shared tuple of Nones per count
    (a tuple each took ~1.9 MB of a 20 MB draft's analysis).
    """
    if bindings:
        own = {id(binding): number for number, binding in enumerate(bindings)}
        owners = tuple([own.get(id(reference.binding)) for reference in references])
        if any(owner is not None for owner in owners):
            return owners
    count = len(references)
    if count > _MOST_SHARED:
        return (None,) * count
    shared = _OUTSIDE.get(count)
    if shared is None:
        shared = _OUTSIDE[count] = (None,) * count
    return shared


#: The owners of ``count`` references that all resolve outside their region, by ``count`` (at most
#: :data:`_MOST_SHARED`: every count up to it kept is ~17 KB; a region reading more names is rare).
_OUTSIDE: dict[int, tuple[None, ...]] = {}
_MOST_SHARED = 64


def check_facts(checks: Sequence[CheckResult], starts: list[int]) -> tuple[int, int, bool, tuple[int, ...]]:
    """Of ``checks`` (at least one) starting at ``starts``: the first start, the largest, whether they are
    in order of start, and the positions of the failing ones (FAIL or WARN)."""
    if len(starts) == 1:  # most regions with checks: a code span's or a claim's one
        return starts[0], starts[0], True, (0,) if checks[0].status in _FAILING else ()
    in_order = all(a <= b for a, b in zip(starts, starts[1:]))
    failing = tuple(n for n, check in enumerate(checks) if check.status in _FAILING)
    return starts[0], max(starts), in_order, failing


def region_bounds(region: Region) -> tuple[int, int]:
    """Where a region starts and ends: a claim from its number to the end of its ``<!-- OP expr -->``."""
    if isinstance(region, ClaimRegion):
        return region.start, region.end
    if isinstance(region, CodeSpanRegion):
        return region.start, region.start + region.length
    return region.span.start, region.span.end


def region_start(region: Region) -> int:
    """Where a region starts (:func:`region_bounds`'s start, without its end)."""
    return region.start if isinstance(region, (ClaimRegion, CodeSpanRegion)) else region.span.start


@dataclass(slots=True)
class Run:
    """What walking one run did, to do again: ``steps`` are applied effects and deferred claims, in order."""

    #: The chunk scan it was recorded from (a key names it by id; this keeps the id meaningful).
    scan: ChunkScan
    #: Where its chunk started when it was recorded.
    chunk_start: int
    #: Effects (applied as one region's), a region of the chunk that waits for names below (``forward.Waiting``),
    #: or (-n, ()): the chunk's n-th scope starts (its regions are in another problem, or at the top level).
    steps: list[Effects | Waiting | tuple[int, tuple[Any, ...]]]
    #: Regions it counts as reused when replayed (as many as its walk evaluated or reused).
    counted: int
    #: Sweep elements its regions computed (a replay spends them from the analysis's budget).
    elements: int
    #: The region-cache entries its walk used (kept while the run is replayed, for the walk after an edit).
    entries: dict[tuple[Any, ...], Effects] = field(default_factory=dict)
    #: Where its chunk started when it was last replayed.
    replayed_at: int = -1

    def moved_to(self, start: int) -> None:
        """Its chunk starts at ``start`` for good, it seems (replayed there twice): record its effects there."""
        self.steps = [moved_effects(step, start - self.chunk_start) if isinstance(step, Effects) else step
                      for step in self.steps]  # fmt: skip
        self.chunk_start = start


def _as_recorded(check: CheckResult) -> CheckResult:
    """A recorded check as it was recorded (for :meth:`Segments.add_moved`)."""
    return check
