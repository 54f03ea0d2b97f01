"""Forward references in prose: a claim or inline value may state a result that a later block derives.

``Training takes 22 days<!-- ≈ t -->.`` followed by the block that defines
``t``: the author states the result, then derives it.  A claim or inline
value reads each name's latest definition above it; a name with none above
reads its first definition below, in the same scope (the same problem, or
the top level).  Calc blocks stay top-down.

The driver (``analysis.py``) evaluates every region in document order,
claims and inline values *quietly* (an unknown name gets no did-you-mean:
finding one costs a scan of every name in scope).  One that meets an unknown
name is *deferred*, with the definitions it could see where it stands.
Definitions made later in its scope are noted as they are applied; when the
scope ends (the problem is left, or the draft ends) the region is evaluated
again over its names as they were plus the first definitions below.  If a
name is still unknown then, it is evaluated once more over every name in
its scope, for the error's did-you-mean.  With a region cache, the second
evaluation is cached under the region's key plus the values of the
definitions below, so an edit elsewhere replays it like any other region.
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
            self.resolve(deferred, lambda: {**scope.top_level, **(scope.local or {})})

    def finish(self) -> None:
        """The draft ends: evaluate what still waits (the last problem's, then the top level's)."""
        self.leave_problem()
        regions, _ = self.top
        self.top = ([], {})
        scope = self.interpreter.scope
        for deferred in regions:
            self.resolve(deferred, lambda: dict(scope.top_level))

    def resolve(self, deferred: Deferred, in_scope: Callable[[], dict[str, Binding]]) -> None:
        """Evaluate a deferred region over its names above and the first definitions below, and apply it.

        ``in_scope`` gives every name of its scope now, for the did-you-mean of a name still unknown.
        """
        interpreter = self.interpreter
        effects = None
        if deferred.below:
            view = self.view({**deferred.above, **deferred.below}, deferred.problem)
            key = None
            if self.cache is not None and deferred.key is not None:
                below = tuple((name, _stamp(binding)) for name, binding in sorted(deferred.below.items()))
                key = ("below", deferred.key, below)
                found = self.cache.get(key)
                if found is not None:
                    interpreter.apply(found, region_bounds(deferred.region)[0] - found.start, view=view)
                    return
            effects = interpreter.evaluate(deferred.region, view)
            if key is not None and self.cache is not None:
                self.cache.put(key, effects)
        if effects is None or waits(effects):
            # A name it mentions is defined nowhere it can see: the error, with every name in scope for did-you-mean.
            names = {**in_scope(), **deferred.above, **deferred.below}
            effects = interpreter.evaluate(deferred.region, self.view(names, deferred.problem))
        interpreter.apply(effects, 0, replayed=False)

    def view(self, names: dict[str, Binding], problem: str | None) -> Scope:
        """A scope holding exactly ``names`` (and the chips), inside ``problem``."""
        view = Scope(self.interpreter.scope.records)
        view.top_level = names
        view.problem = problem
        return view


def _stamp(binding: Binding) -> object:
    return binding.fingerprint if binding.fingerprint is not None else fingerprint(binding.value)
