"""Forward references in prose: a claim or inline value may state a result that a later block derives.

``Training takes 22 days<!-- ≈ t -->.`` followed by the block that defines
``t``: the author states the result, then derives it.  A claim or inline
value reads each name's latest definition above it; a name with none above
reads its first definition below, in the same scope (the same problem, or
the top level).  Calc blocks stay top-down.

The driver (``driver.py``) evaluates every region in document order
(*quietly*: an unknown name's did-you-mean note is added once the analysis
is done, ``names.suggest_names``).  A claim or inline value that meets an
unknown name is *deferred*, with the definitions it could see where it
stands.  Definitions made later in its scope are noted as they are applied;
when the scope ends (the problem is left, or the draft ends) the region is
evaluated again over its names as they were plus the first definitions
below (and a name it mentions that its scope has by then in another way,
through an import below).  With a region cache, that evaluation is cached
under the region's key plus the values of those definitions, so an edit
elsewhere replays it like any other region, unknown names included.

In a run replayed from the cache (``driver.py``), a waiting region is one of
its steps (:class:`Waiting`): the names it mentions and its latest resolution
are kept there, so replaying it neither moves the region nor reads its text,
and resolving it again, when what it reads below has not changed, looks up
nothing: a keystroke costs the same whatever the number of claims that wait.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scaling_core.document.effects import Effects, region_bounds
from scaling_core.document.incremental import RegionCache, _incomplete, fingerprint, identifiers
from scaling_core.document.interpret import Interpreter
from scaling_core.document.regions import ClaimRegion, CodeSpanRegion, Region
from scaling_core.document.results import Binding
from scaling_core.document.scope import Scope
from scaling_core.document.shift import shift_region


@dataclass(slots=True, eq=False)
class Waiting:
    """A step of a recorded run: the chunk's region ``number`` waited for names below (``effects.Run``)."""

    number: int
    #: Its region key (the run's key decides it).
    key: tuple[Any, ...]
    #: Every name it may read, in order (``ForwardReferences.names_read``: they hold while the run does).
    names: tuple[str, ...] = ()
    #: Its latest resolution: (the stamps of the definitions below it read, its effects).
    resolved: tuple[tuple[Any, ...], Effects] | None = None
    #: Every name in its text, once read (a claim's number and unit included; its text holds while the run does).
    mentioned: tuple[str, ...] | None = None


class Settles(Protocol):
    """Claims already resolved, added with the waiting ones when their scope ends (``gathered.Settled``)."""

    def settle(self, interpreter: Interpreter) -> None:
        """Add their effects to the results."""


@dataclass(slots=True)
class Deferred:
    """A claim or inline value waiting for names defined below it."""

    #: The region, ``offset`` before where it now stands (a replayed run's region, moved only if evaluated).
    region: Region
    #: Its region-cache key where it stands (None without a cache).
    key: tuple[Any, ...] | None
    problem: str | None
    #: The definitions it could see where it stands, of the names it mentions.
    above: dict[str, Binding]
    #: The first definition below it, in its scope, of each name it waits for.
    below: dict[str, Binding] = field(default_factory=dict)
    offset: int = 0
    #: Its step in a recorded run, which keeps its latest resolution (None outside runs).
    step: Waiting | None = None

    def placed(self) -> Region:
        """The region where it stands now."""
        return shift_region(self.region, self.offset) if self.offset else self.region  # type: ignore[return-value]

    def bounds(self) -> tuple[int, int]:
        """Where the region starts and ends now (``effects.region_bounds``)."""
        start, end = region_bounds(self.region)
        return start + self.offset, end + self.offset


def looks_below(region: Region) -> bool:
    """Whether a region may read a name defined below it: a claim or an inline value."""
    return isinstance(region, ClaimRegion) or (isinstance(region, CodeSpanRegion) and region.role)


def waits(effects: Effects) -> bool:
    """Whether a claim or inline value's effects show an unknown name (which may be defined below)."""
    return any(d.code == "N001" for d in effects.diagnostics)


class ForwardReferences:
    """The deferred regions of one analysis, per scope, and the names they wait for."""

    __slots__ = ("interpreter", "cache", "top", "local")

    def __init__(self, interpreter: Interpreter, cache: RegionCache | None) -> None:
        self.interpreter = interpreter
        self.cache = cache
        #: Waiting at the top level and in the current problem: (deferred regions, name -> those waiting for it).
        #: (Settled claims wait in the same lists, to keep their order.)
        self.top: tuple[list[Deferred | Settles], dict[str, list[Deferred]]] = ([], {})
        self.local: tuple[list[Deferred | Settles], dict[str, list[Deferred]]] = ([], {})

    def defer(
        self, region: Region, key: tuple[Any, ...] | None, scope: Scope, offset: int = 0, step: Waiting | None = None
    ) -> None:
        """Keep ``region`` (``offset`` before where it stands) until its scope ends (``key``: its cache key here).

        ``step``: its step in a run being recorded or replayed, which holds the names it mentions once known.
        """
        names = step.names if step is not None else ()
        if not names:
            names = self.names_read(region, offset)
            if step is not None:
                step.names = names
        above: dict[str, Binding] = {}
        waiting = []
        for name in names:
            binding = scope.binding(name)
            if binding is not None:
                above[name] = binding
            elif name not in scope.records:
                waiting.append(name)
        deferred = Deferred(region, key, scope.problem, above, {}, offset, step)
        regions, wanted = self.local if scope.local is not None else self.top
        regions.append(deferred)
        for name in waiting:
            wanted.setdefault(name, []).append(deferred)

    def settle(self, settled: Settles, scope: Scope) -> None:
        """Keep claims already resolved (a gathered stretch's, ``gathered.py``) in order with those that wait."""
        (self.local if scope.local is not None else self.top)[0].append(settled)

    def names_read(self, region: Region, offset: int) -> tuple[str, ...]:
        """The names a waiting region may read: a claim's are its expression's (the number's unit is a
        unit, never a name: ``174 µs<!-- ≈ t -->`` waits for ``t`` alone), an inline value's its text's."""
        if isinstance(region, ClaimRegion):
            return identifiers(region.expr_text)
        start, end = region_bounds(region)
        return identifiers(self.interpreter.text[start + offset : end + offset])

    def defined(self, bindings: Sequence[Binding], in_problem: bool, names: Sequence[str] = ()) -> None:
        """Note definitions just applied in the current scope (the first one of a name is what waiters read).

        ``names``, when given, are the definitions' names: if none is waited for, nothing is looked at.
        """
        wanted = (self.local if in_problem else self.top)[1]
        if not wanted or (names and wanted.keys().isdisjoint(names)):
            return
        for binding in bindings:
            waiting = wanted.pop(binding.name, None)
            if waiting:
                for deferred in waiting:
                    deferred.below.setdefault(binding.name, binding)

    def leave_problem(self) -> None:
        """The current problem ends: evaluate what waited inside it (its local names are still in scope)."""
        regions, _ = self.local
        if not regions:
            return
        self.local = ([], {})
        scope = self.interpreter.scope
        for deferred in regions:
            if isinstance(deferred, Deferred):
                self.resolve(deferred, scope.binding)
            else:
                deferred.settle(self.interpreter)

    def finish(self) -> None:
        """The draft ends: evaluate what still waits (the last problem's, then the top level's)."""
        self.leave_problem()
        regions, _ = self.top
        self.top = ([], {})
        top_level = self.interpreter.scope.top_level
        for deferred in regions:
            if isinstance(deferred, Deferred):
                self.resolve(deferred, top_level.get)
            else:
                deferred.settle(self.interpreter)

    def resolve(self, deferred: Deferred, in_scope: Callable[[str], Binding | None]) -> None:
        """Evaluate a deferred region over its names above and the first definitions below, and apply it.

        ``in_scope`` finds a name in its scope now: a name it mentions that is
        neither above nor below may be there all the same (imported below).
        """
        names = {**deferred.above, **deferred.below}
        below = tuple([(name, binding_stamp(binding)) for name, binding in sorted(deferred.below.items())])
        step = deferred.step
        memo = step.resolved if step is not None else None
        if memo is not None and memo[0] == below:
            # Replayed with its run, reading what it read below last time: its effects then (no lookup).
            effects, replayed = memo[1], True
        else:
            effects, replayed = self.evaluate(deferred, names, ("below", below))
            if step is not None:
                step.resolved = (below, effects) if _reusable(effects) else None
        start = -1
        if effects.diagnostics and waits(effects):
            start, end = deferred.bounds()
            mentioned = step.mentioned if step is not None else None
            if mentioned is None:
                mentioned = identifiers(self.interpreter.text[start:end])
                if step is not None:
                    step.mentioned = mentioned
            extra = {}
            for name in mentioned:
                if name not in names and (binding := in_scope(name)) is not None:
                    extra[name] = binding
            if extra:  # still unknown where it stands, yet its scope has it by now (imported below)
                seen = tuple((name, binding_stamp(binding)) for name, binding in sorted(extra.items()))
                names = {**extra, **names}
                effects, replayed = self.evaluate(deferred, names, ("in scope", below, seen))
        if replayed:
            at = start if start >= 0 else deferred.bounds()[0]
            self.interpreter.apply(effects, at - effects.start, names=names.get)
        else:
            self.interpreter.apply(effects, 0, replayed=False)

    def evaluate(self, deferred: Deferred, names: dict[str, Binding], inputs: tuple[Any, ...]) -> tuple[Effects, bool]:
        """``deferred``'s effects over exactly ``names`` (from the cache, under its key and ``inputs``,
        when it has them), and whether they came from the cache."""
        key = None
        if self.cache is not None and deferred.key is not None:
            self.cache.resolved += 1
            key = (deferred.key, *inputs)
            found = self.cache.get(key)
            if found is not None:
                return found, True
        effects = self.interpreter.evaluate(deferred.placed(), self.view(names, deferred.problem), quiet=True)
        if key is not None and self.cache is not None:
            self.cache.put(key, effects)
        return effects, False

    def view(self, names: dict[str, Binding], problem: str | None) -> Scope:
        """A scope holding exactly ``names`` (and the chips), inside ``problem``."""
        view = Scope(self.interpreter.scope.records)
        view.top_level = names
        view.problem = problem
        return view


def _reusable(effects: Effects) -> bool:
    """Whether a resolution may be replayed as it is: what the region cache would keep, spending no sweep
    elements (a replay must spend them from the budget, see ``RegionCache.get``)."""
    return effects.replayable and not effects.elements and not any(_incomplete(d) for d in effects.diagnostics)


def binding_stamp(binding: Binding) -> object:
    """What a definition's value is, as a key holds it (its fingerprint)."""
    return binding.fingerprint if binding.fingerprint is not None else fingerprint(binding.value)
