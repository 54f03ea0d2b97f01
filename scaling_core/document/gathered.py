"""A stretch's runs gathered into a few pieces, applied as one when the stretch is replayed whole.

Replaying a stretch run by run (``stretches.py``) applies each step of each
run: a region's worth of bookkeeping per step (moving its definitions,
re-resolving its references, ~10 µs), and every claim that waited for a name
below is deferred again, then resolved at the end of the draft (measured on
10,000 lines of claims stated before the block that derives them: ~1,800
claims, 60% of a keystroke).  A stretch replayed whole meets every name as it
did (``stretches.py``), so what its steps add up to is known once gathered:

* its effects, in order, with each item's own offset (its run's), moved into
  place by the stretch's offset when first read (``segments.py``);
* its references, each resolving either to a definition the stretch makes
  (by position among them) or to a name looked up where the stretch starts;
* the claims that wait for a name the stretch itself defines below them: their
  resolution is the one their step last recorded (``forward.Waiting``), whose
  key, the first definitions below, the stretch fixes too.  They are added
  where the draft's (or the problem's) waiting claims are resolved, in order
  (:class:`Settled`), so the results read as a run-by-run replay's.

A claim that waits for a name the stretch does not define (or one whose
recorded resolution does not fit) is deferred as in a run's replay.  When the
stretch defines a name it mentions, the effects before and after it form
separate pieces; else it is deferred after the piece that holds it, where it
reads the same names (``stretch_claims.py``).  Stretches that import
something are replayed run by run.

A stretch that crosses problems (it starts at the top level, ``stretches.py``)
is gathered too, one piece per scope it enters, with the scope changes between
them (:class:`Enter`): a reference resolves as the scope would resolve it
there, to a definition of the stretch in the problem's own scope, then at the
top level, else to a name looked up at the top level where the stretch starts.
Its waiting claims are all deferred, as in a run's replay (a problem's are
resolved when it ends).  It is replayed gathered only while the problems it
crosses lie where they lay, from where it starts, when it was gathered (its
``layout``): its chunks then fall into the same scopes, and are not looked at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from scaling_core.diagnostics import Diagnostic
from scaling_core.document.effects import Bounds, Effects, check_facts, region_bounds, results_bounds
from scaling_core.document.forward import Waiting
from scaling_core.document.regions import ChunkScan
from scaling_core.document.results import Binding, CheckResult, Reference, ValueResult
from scaling_core.document.shift import move_check, move_each, move_value, shift_diagnostic
from scaling_core.document.stretch_claims import imports_nothing, names_defined, settled_claims

if TYPE_CHECKING:
    from scaling_core.document.driver import Driver
    from scaling_core.document.interpret import Interpreter

#: A reference's target: a definition of the stretch (its position among them), or a name looked up at its start.
Target = int | str


class Placed(list[Any]):
    """Items of a piece (the list's own) and each one's offset from where the stretch was gathered (and, for
    references, each one's target), read as tuples: ``(item, offset)`` or ``(item, offset, target)``.

    A tuple per item took 64 bytes (~4% of a long draft's analysis and cache); a column takes 8 an item, and
    none while every item has one offset (as all have, gathered by a first analysis: a column each took ~5.6 MB
    of a 20 MB draft's).  A list underneath, so its length and truth cost no Python call (segments.py asks them
    of each part it reads).
    """

    __slots__ = ("_offset", "_spread", "targets")

    def __init__(self, targets: bool = False) -> None:
        super().__init__()
        #: The offset of every item while they have one; else each item's, in ``_spread``.
        self._offset = 0
        self._spread: list[int] | None = None
        self.targets: list[Target | None] | None = [] if targets else None

    def add(self, items: Sequence[Any], offset: int, targets: Sequence[Target | None] | None = None) -> None:
        """Add ``items``, all at ``offset`` (references with their ``targets``)."""
        if items:
            if self._spread is not None:
                self._spread += [offset] * len(items)
            elif not self or offset == self._offset:
                self._offset = offset
            else:
                self._spread = [self._offset] * len(self) + [offset] * len(items)
            self.extend(items)
        if self.targets is not None and targets is not None:
            self.targets += targets

    def moved_by(self, delta: int) -> bool:
        """Whether an item is not at ``-delta`` (``delta`` further on, it would not be where it was recorded)."""
        spread = self._spread
        return any(offset + delta for offset in spread) if spread is not None else bool(self) and self._offset != -delta

    @property
    def offsets(self) -> list[int]:
        """Each item's offset (a list made for the asking while they all have one)."""
        spread = self._spread
        return spread if spread is not None else [self._offset] * len(self)

    @property
    def items(self) -> list[Any]:
        """The items alone (a copy)."""
        return list(super().__iter__())

    def __iter__(self) -> Iterator[Any]:
        items = super().__iter__()
        spread = self._spread
        offsets = spread if spread is not None else repeat(self._offset)
        return zip(items, offsets) if self.targets is None else zip(items, offsets, self.targets)

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        spread = self._spread
        if type(index) is slice:
            offsets = spread[index] if spread is not None else repeat(self._offset)
            return list(zip(item, offsets)) if self.targets is None else list(zip(item, offsets, self.targets[index]))
        offset = spread[index] if spread is not None else self._offset
        return (item, offset) if self.targets is None else (item, offset, self.targets[index])


@dataclass(slots=True, eq=False)
class Piece:
    """Consecutive effects of a stretch, each item with its run's offset from where the stretch was gathered."""

    diagnostics: list[tuple[Diagnostic, int]] = field(default_factory=list)
    #: (value, offset), (check, offset), (definition, offset), (reference, offset, target): see :class:`Placed`.
    values: Placed = field(default_factory=Placed)
    checks: Placed = field(default_factory=Placed)
    bindings: Placed = field(default_factory=Placed)
    references: Placed = field(default_factory=partial(Placed, targets=True))
    elements: int = 0
    #: The resolutions of the claims of this piece that waited for the stretch's own definitions, in order.
    settled: Piece | None = None
    #: Of its checks, as gathered: the first start, the largest, whether in order, the failing ones' positions.
    facts: tuple[int, int, bool, tuple[int, ...]] = (0, 0, True, ())
    #: ``segments.span_bounds`` of its values', checks' and references' spans, as gathered.
    bounds: tuple[Bounds, Bounds, Bounds] = ((), (), ())
    #: How far from where gathered it was last added (``_add``).
    last_delta: int | None = None
    #: Its definitions' names, in order.
    names: tuple[str, ...] = ()

    def add(self, effects: Effects, delta: int, targets: Sequence[Target | None]) -> None:
        """Add a region's (or a slice's) effects, ``delta`` from where they were recorded."""
        self.diagnostics += [(d, delta) for d in effects.diagnostics]
        self.values.add(effects.values, delta)
        self.checks.add(effects.checks, delta)
        self.bindings.add(effects.bindings, delta)
        self.references.add(effects.references, delta, targets)
        self.elements += effects.elements

    def seal(self) -> None:
        """Work out its checks' facts and its definitions' names (once gathered)."""
        self.names = tuple([binding.name for binding, _at in self.bindings])
        self.bounds = tuple([results_bounds(items.items, items.offsets)
                             for items in (self.values, self.checks, self.references)])  # type: ignore[assignment]  # fmt: skip
        if self.checks:
            checks = self.checks.items
            self.facts = check_facts(checks, [check.start + delta for check, delta in self.checks])
        if self.settled is not None:
            self.settled.seal()


@dataclass(slots=True, eq=False)
class Deferral:
    """A claim of the stretch that waits for a name the stretch does not define: deferred as a run's replay does."""

    run: int
    step: Waiting


@dataclass(slots=True, eq=False)
class Enter:
    """A stretch that crosses problems enters a scope: the ``problem``-th problem it crosses (-1: the top level)."""

    problem: int


#: A stretch's chunks' scopes (``Driver.scopes``), in order (None: a chunk with nothing checked).
Plans = Sequence["Sequence[tuple[Any, int, int]] | None"]
#: The problems a stretch crosses, in order, and where they lie from its start: (identifier, start, end).
Layout = tuple[tuple[str, int, int], ...]


@dataclass(slots=True, eq=False)
class Gathered:
    """A stretch's steps as pieces (see the module docstring), gathered where its first chunk started then."""

    start: int
    parts: list[Piece | Deferral | Enter]
    #: The names its references read where it starts (a definition it makes is a ``Target`` by position).
    outside: tuple[str, ...]
    #: For a stretch that crosses problems, where they lay (it is replayed gathered only while they lie there).
    layout: Layout | None = None


@dataclass(slots=True, eq=False)
class Settled:
    """Claims resolved with a stretch, waiting with the others until their scope ends (``forward.py``)."""

    piece: Piece
    delta: int
    placed: list[Binding]
    outside: dict[str, Binding | None]

    def settle(self, interpreter: Interpreter) -> None:
        """Add their effects to the results, where the resolution of waiting claims adds them."""
        place_reference = partial(_place_reference, self.placed, self.outside)
        _add(interpreter, self.piece, self.delta, self.placed, place_reference)


def gather(
    runs: Sequence[Any],
    chunks: Sequence[tuple[int, ChunkScan]],
    stamps: dict[str, Any],
    plans: Plans | None = None,
    crossed: tuple[Sequence[Any], Layout] | None = None,
) -> Gathered | None:
    """The pieces of a stretch's ``runs`` over ``chunks`` (where they start now; ``stamps``: what each name the
    stretch mentions meant at its start, as its inputs hold it), or None if it imports, or crosses scopes without
    ``plans`` (each chunk's scopes) and ``crossed`` (the problems it crosses and their layout)."""
    settled = settled_claims(runs, stamps) if plans is None else ({} if imports_nothing(runs) else None)
    if settled is None:
        return None
    numbers = {id(problem): number for number, problem in enumerate(crossed[0])} if crossed is not None else {}
    parts: list[Piece | Deferral | Enter] = []
    piece = Piece()
    names = _Definitions()
    count = 0
    defines = names_defined(runs)
    #: Deferred claims that need not split the piece: none of their names is defined in the stretch.
    pending: list[Deferral] = []
    for number, run in enumerate(runs):
        if run is None:
            continue
        start, scan = chunks[number]
        delta = start - run.chunk_start
        # Across problems, a run starts in its chunk's first scope (as ``(0, ())``, the step of its next scopes).
        for step in ((0, ()), *run.steps) if plans is not None else run.steps:
            if type(step) is tuple:  # a scope of the chunk (only with plans: ``_settled`` refuses it)
                assert plans is not None
                if names.enters(plans, number, -step[0]):
                    if names.problem is not None and id(names.problem) not in numbers:
                        return None  # not among the problems it crosses: not gathered
                    piece = _next_piece(parts, piece, Enter(numbers.get(id(names.problem), -1)), pending)
                continue
            if type(step) is Waiting:
                found = settled.get(id(step))
                if found is None:
                    if step.names and defines.isdisjoint(step.names):
                        pending.append(Deferral(number, step))
                    else:
                        piece = _next_piece(parts, piece, Deferral(number, step), pending)
                    continue
                if pending:  # a resolution is settled after the claims deferred before it (forward.py's order)
                    piece = _next_piece(parts, piece, None, pending)
                claim_names, resolution = found
                region_start = start + region_bounds(scan.regions[step.number])[0]
                if piece.settled is None:
                    piece.settled = Piece()
                piece.settled.add(resolution, region_start - resolution.start,
                                  [claim_names.get(r.name, r.name) for r in resolution.references])  # fmt: skip
                continue
            assert isinstance(step, Effects)
            # Its definitions' numbers, one object each: its references to them hold that object, not one of their own.
            own = [count + at for at in range(len(step.bindings))] if step.bindings else []
            piece.add(step, delta, [own[owner] if owner is not None else names.target(r.name)
                                    for r, owner in zip(step.references, step.owners)])  # fmt: skip
            for binding, at in zip(step.bindings, own):
                names.define(binding.name, at)
            count += len(own)
    piece.seal()
    parts += [piece, *pending]
    outside = {name for part in parts if isinstance(part, Piece) for name in _names_read(part)}
    return Gathered(chunks[0][0], parts, tuple(sorted(outside)), crossed[1] if crossed is not None else None)


def _next_piece(
    parts: list[Piece | Deferral | Enter], piece: Piece, between: Deferral | Enter | None, pending: list[Deferral]
) -> Piece:
    """Close ``piece`` before ``between`` (a deferred claim or a scope change), after it the claims ``pending``
    (then none): the piece that follows.

    A claim deferred in a replay reads, where it stands, the names it mentions
    (``ForwardReferences.defer``); when the stretch defines none of them, it reads
    the same after the piece that holds it, so the piece is not split there (a
    draft with ~200 misspelt names had twice as many pieces, each added apart).
    """
    piece.seal()
    parts += [piece, *pending] if between is None else [piece, *pending, between]
    pending.clear()
    return Piece()


class _Definitions:
    """The stretch's definitions so far (their positions), as a reference where the gathering is would see them."""

    __slots__ = ("top", "local", "problem")

    def __init__(self) -> None:
        self.top: dict[str, int] = {}
        #: The current problem's own definitions (None at the top level), and the problem (as planned).
        self.local: dict[str, int] | None = None
        self.problem: Any = None

    def enters(self, plans: Plans, run: int, position: int) -> bool:
        """Whether chunk ``run``'s scope ``position`` is another scope than the current one (then entered)."""
        scopes = plans[run]
        assert scopes is not None
        problem = scopes[position][0]
        if problem is self.problem:
            return False
        self.problem, self.local = problem, ({} if problem is not None else None)
        return True

    def target(self, name: str) -> Target:
        """A reference's target: a definition of the stretch (local scope, then top level), else the name."""
        local = self.local
        if local is not None and (found := local.get(name)) is not None:
            return found
        return self.top.get(name, name)

    def define(self, name: str, at: int) -> None:
        """The stretch's definition number ``at`` of ``name``, in the current scope."""
        (self.local if self.local is not None else self.top)[name] = at


def _names_read(piece: Piece) -> list[str]:
    found = [t for _r, _d, t in piece.references if isinstance(t, str)]
    if piece.settled is not None:
        found += _names_read(piece.settled)
    return found


def replay_gathered(
    driver: Driver, gathered: Gathered, chunks: Sequence[tuple[int, ChunkScan]], crossed: Sequence[Any] = ()
) -> None:
    """Add what the stretch adds, its first chunk now starting at ``chunks[0][0]`` (its scope entered; ``crossed``:
    the problems it crosses, laid out as when gathered)."""
    interpreter, forward = driver.interpreter, driver.forward
    delta = chunks[0][0] - gathered.start
    scope = interpreter.scope
    outside = {name: scope.binding(name) for name in gathered.outside}
    placed: list[Binding] = []
    place_reference = partial(_place_reference, placed, outside)  # one for every piece of the stretch
    in_problem = driver.current is not None
    for part in gathered.parts:
        if isinstance(part, Deferral):
            start, scan = chunks[part.run]
            forward.defer(scan.regions[part.step.number], part.step.key, scope, start, part.step)
            continue
        if isinstance(part, Enter):
            driver.enter(crossed[part.problem] if part.problem >= 0 else None)
            in_problem = driver.current is not None
            continue
        first = len(placed)
        _add(interpreter, part, delta, placed, place_reference)
        if part.bindings:
            bindings = placed[first:]
            scope.current.update(zip(part.names, bindings))  # ``Scope.add`` in one call (a piece imports nothing)
            forward.defined(bindings, in_problem, part.names)
        if part.settled is not None:
            forward.settle(Settled(part.settled, delta, placed, outside), scope)


def _add(
    interpreter: Interpreter,
    piece: Piece,
    delta: int,
    placed: list[Binding],
    place_reference: Callable[[int, tuple[Reference, int, Target | None]], Reference],
) -> None:
    """Add a piece's effects to the results, ``delta`` further on than gathered (its definitions join ``placed``;
    ``place_reference`` moves a reference and resolves it, among ``placed`` or outside the stretch)."""
    results = interpreter.results
    if piece.elements:
        interpreter.evaluator.budget.elements += piece.elements
    # Definitions and diagnostics are moved now.  Added twice in a row at one place (the edits are below it, though
    # its runs were recorded elsewhere), they are kept there (``-delta`` from where gathered): none moves again.
    again, piece.last_delta = delta == piece.last_delta, delta
    if piece.bindings:
        new = move_each(piece.bindings, delta)
        if again and piece.bindings.moved_by(delta):
            piece.bindings = Placed()
            piece.bindings.add(new, -delta)
        placed += new
        results.bindings += new
    if piece.references:
        results.references.add_moved(piece.references, place_reference, delta, bounds=piece.bounds[2])
    if piece.diagnostics:
        moved = [shift_diagnostic(d, at + delta) if at + delta else d for d, at in piece.diagnostics]
        if again and any(at + delta for _d, at in piece.diagnostics):
            piece.diagnostics = [(diagnostic, -delta) for diagnostic in moved]
        results.diagnostics += moved
    if piece.values:
        results.values.add_moved(piece.values, _place_value, delta, bounds=piece.bounds[0])
    if piece.checks:
        facts = piece.facts
        results.count_checks(facts, delta)
        keys = (facts[0] + delta, facts[1] + delta)
        results.checks.add_moved(piece.checks, _place_check, delta, keys, itemgetter(0), piece.bounds[1])


def _place_reference(
    placed: list[Binding], outside: dict[str, Any], delta: int, item: tuple[Reference, int, Target | None]
) -> Reference:
    reference, at, target = item
    binding = placed[target] if type(target) is int else outside.get(target) if target is not None else None  # type: ignore[arg-type]
    return reference.moved(at + delta, binding)


def _place_value(delta: int, item: tuple[ValueResult, int]) -> ValueResult:
    value, at = item
    return move_value(at + delta, value) if at + delta else value


def _place_check(delta: int, item: tuple[CheckResult, int]) -> CheckResult:
    check, at = item
    return move_check(at + delta, check) if at + delta else check
