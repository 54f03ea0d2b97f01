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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scaling_core.document.effects import Effects, region_bounds
from scaling_core.document.incremental import RegionCache, fingerprint, identifiers
from scaling_core.document.interpret import Interpreter
from scaling_core.document.regions import ClaimRegion, CodeSpanRegion, Region
from scaling_core.document.results import Binding
from scaling_core.document.scope import Scope


@dataclass(slots=True)
class Deferred:
    """A claim or inline value waiting for names defined below it."""

    region: Region
    #: Its region-cache key where it stands (None without a cache).
    key: tuple[Any, ...] | None
    problem: str | None
    #: The definitions it could see where it stands, of the names it mentions.
    above: dict[str, Binding]
    #: The first definition below it, in its scope, of each name it waits for.
    below: dict[str, Binding] = field(default_factory=dict)


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
        self.top: tuple[list[Deferred], dict[str, list[Deferred]]] = ([], {})
        self.local: tuple[list[Deferred], dict[str, list[Deferred]]] = ([], {})

    def defer(self, region: Region, key: tuple[Any, ...] | None, scope: Scope) -> None:
        """Keep ``region`` until its scope ends (``key``: its cache key here)."""
        start, end = region_bounds(region)
        above: dict[str, Binding] = {}
        waiting = []
        for name in identifiers(self.interpreter.text[start:end]):
            binding = scope.binding(name)
            if binding is not None:
                above[name] = binding
            elif name not in scope.records:
                waiting.append(name)
        deferred = Deferred(region, key, scope.problem, above)
        regions, wanted = self.local if scope.local is not None else self.top
        regions.append(deferred)
        for name in waiting:
            wanted.setdefault(name, []).append(deferred)

    def defined(self, bindings: tuple[Binding, ...], in_problem: bool) -> None:
        """Note definitions just applied in the current scope (the first one of a name is what waiters read)."""
        wanted = (self.local if in_problem else self.top)[1]
        if not wanted:
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
            self.resolve(deferred, scope.binding)

    def finish(self) -> None:
        """The draft ends: evaluate what still waits (the last problem's, then the top level's)."""
        self.leave_problem()
        regions, _ = self.top
        self.top = ([], {})
        top_level = self.interpreter.scope.top_level
        for deferred in regions:
            self.resolve(deferred, top_level.get)

    def resolve(self, deferred: Deferred, in_scope: Callable[[str], Binding | None]) -> None:
        """Evaluate a deferred region over its names above and the first definitions below, and apply it.

        ``in_scope`` finds a name in its scope now: a name it mentions that is
        neither above nor below may be there all the same (imported below).
        """
        names = {**deferred.above, **deferred.below}
        below = tuple((name, _stamp(binding)) for name, binding in sorted(deferred.below.items()))
        effects, view, replayed = self.evaluate(deferred, names, ("below", below))
        if waits(effects):
            start, end = region_bounds(deferred.region)
            extra = {}
            for name in identifiers(self.interpreter.text[start:end]):
                if name not in names and (binding := in_scope(name)) is not None:
                    extra[name] = binding
            if extra:  # still unknown where it stands, yet its scope has it by now (imported below)
                seen = tuple((name, _stamp(binding)) for name, binding in sorted(extra.items()))
                effects, view, replayed = self.evaluate(deferred, {**extra, **names}, ("in scope", below, seen))
        if replayed:
            self.interpreter.apply(effects, region_bounds(deferred.region)[0] - effects.start, view=view)
        else:
            self.interpreter.apply(effects, 0, replayed=False)

    def evaluate(
        self, deferred: Deferred, names: dict[str, Binding], inputs: tuple[Any, ...]
    ) -> tuple[Effects, Scope, bool]:
        """``deferred``'s effects over exactly ``names`` (from the cache, under its key and ``inputs``,
        when it has them), the scope they were evaluated in, and whether they came from the cache."""
        view = self.view(names, deferred.problem)
        key = None
        if self.cache is not None and deferred.key is not None:
            key = (deferred.key, *inputs)
            found = self.cache.get(key)
            if found is not None:
                return found, view, True
        effects = self.interpreter.evaluate(deferred.region, view, quiet=True)
        if key is not None and self.cache is not None:
            self.cache.put(key, effects)
        return effects, view, False

    def view(self, names: dict[str, Binding], problem: str | None) -> Scope:
        """A scope holding exactly ``names`` (and the chips), inside ``problem``."""
        view = Scope(self.interpreter.scope.records)
        view.top_level = names
        view.problem = problem
        return view


def _stamp(binding: Binding) -> object:
    return binding.fingerprint if binding.fingerprint is not None else fingerprint(binding.value)
