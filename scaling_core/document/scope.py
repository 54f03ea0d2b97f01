"""Scopes: the names a region sees, and the names one region's evaluation adds.

A draft has one top-level scope.  Inside a problem (``**Problem 3.**``) a
fresh local scope sits on top of it, so each problem's names stay its own;
chip records (``h100``) are visible beneath both.  A name resolves to the
local definition, then the top-level one, then a chip.

Evaluating a region never writes into the :class:`Scope`: the region's own
definitions and imports go into a :class:`RegionScope` layered over it, so
later statements of the region see them.  ``Interpreter.apply`` then writes
the region's effects into the scope with :meth:`Scope.add`, in the order the
region made them; a replayed region's effects go in the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.effects import Imported
from scaling_core.document.results import Binding
from scaling_core.expr.values import Record, Value


class Scope:
    """The top level, the current problem's local scope, and the chip records."""

    __slots__ = ("top_level", "local", "records", "problem")

    def __init__(self, records: Mapping[str, Record]) -> None:
        #: Top-level definitions and imported names (a draft's exports).
        self.top_level: dict[str, Binding] = {}
        #: The current problem's definitions; None outside problems.
        self.local: dict[str, Binding] | None = None
        self.records = records
        #: The identifier of the problem the scope is in (``3`` for Problem 3), or None.
        self.problem: str | None = None

    def enter(self, problem: str | None) -> None:
        """Enter ``problem``'s fresh local scope; None returns to the top level."""
        self.local = {} if problem is not None else None
        self.problem = problem

    @property
    def current(self) -> dict[str, Binding]:
        """Where definitions go: the problem's local scope, else the top level."""
        return self.local if self.local is not None else self.top_level

    def binding(self, name: str) -> Binding | None:
        """The definition ``name`` resolves to here (None for a chip or an unknown name)."""
        local = self.local
        if local is not None and (found := local.get(name)) is not None:
            return found
        return self.top_level.get(name)

    def lookup(self, name: str) -> Value | None:
        """The value ``name`` has here: local scope, then top level, then chips."""
        found = self.binding(name)
        return found.value if found is not None else self.records.get(name)

    def visible_names(self) -> list[str]:
        """Every name visible here (for did-you-mean)."""
        return [*self.top_level, *(self.local or {}), *self.records]

    def add(self, bindings: Sequence[Binding], imports: Sequence[Imported] = ()) -> None:
        """Write a region's definitions (current scope) and imported names (top level) in the order it made them."""
        current = self.current
        if not imports:
            for binding in bindings:
                current[binding.name] = binding
            return
        done = 0
        for imported in imports:
            for binding in bindings[done : imported.after]:
                current[binding.name] = binding
            done = max(done, imported.after)
            self.top_level.update(imported.names)
        for binding in bindings[done:]:
            current[binding.name] = binding


class RegionScope:
    """A :class:`Scope` as one region's evaluation sees it: the scope plus the region's names so far."""

    __slots__ = ("scope", "own", "own_top_level", "_imported", "local", "top_level", "records", "quiet", "found")

    def __init__(self, scope: Scope) -> None:
        #: The region's definitions (into the current scope).
        self.own: dict[str, Binding] = {}
        self._imported: dict[str, Binding] = {}
        self.begin(scope)

    def begin(self, scope: Scope, *, quiet: bool = False) -> None:
        """Start a region's evaluation over ``scope``, with no names of its own yet.

        The interpreter keeps one region scope and begins it anew for each
        region: its evaluator's lookups stay bound to it, and no new objects
        are made per region (the cyclic collector counts every one).
        ``quiet`` offers no names for did-you-mean (a region whose unknown
        name may be defined below is evaluated again before it is reported).
        """
        self.scope = scope
        self.quiet = quiet
        self.found: Binding | None = None
        if self.own:
            self.own.clear()
        if self._imported:
            self._imported.clear()
        #: The names the region imported (into the top level: the same dict as ``own`` outside problems).
        self.own_top_level: dict[str, Binding] = self.own if scope.local is None else self._imported
        # The scope's parts, read without a second attribute lookup: names resolve for every use of a name.
        self.local, self.top_level, self.records = scope.local, scope.top_level, scope.records

    def binding(self, name: str) -> Binding | None:
        """The definition ``name`` resolves to: the region's own, then the scope's, local before top level."""
        found = self.own.get(name)
        if found is None:
            local = self.local
            if local is not None:
                found = local.get(name) or self.own_top_level.get(name)
            if found is None:
                found = self.top_level.get(name)
        return found

    def lookup(self, name: str) -> Value | None:
        """The value ``name`` has here: local scope, then top level, then chips (:meth:`binding`, written out).

        The definition found stays in :attr:`found` (None for a chip or no
        value) until the next lookup: the reference to it is recorded from
        there, without resolving the name twice.
        """
        found = self.own.get(name)
        if found is None:
            local = self.local
            if local is not None:
                found = local.get(name) or self.own_top_level.get(name)
            if found is None:
                found = self.top_level.get(name)
                self.found = found
                if found is None:
                    return self.records.get(name)
                return found.value
        self.found = found
        return found.value

    def visible_names(self) -> list[str]:
        """Every name visible here (for did-you-mean), in the order the scope will hold them."""
        if self.quiet:
            return []
        top_level = {**self.top_level, **self.own_top_level} if self.own_top_level else self.top_level
        local = {**self.local, **self.own} if self.local is not None else {}
        return [*top_level, *local, *self.records]

    def bind(self, binding: Binding) -> Diagnostic | None:
        """Define a name in the current scope; the N008 hint if the scope already has it."""
        name = binding.name
        redefined = name in self.own or name in (self.local if self.local is not None else self.top_level)
        self.own[name] = binding
        if redefined:
            return make_diagnostic("N008", f"'{name}' is redefined here; later uses see this value", binding.span)
        return None

    def add_imported(self, names: Mapping[str, Binding]) -> None:
        """Bring an import's names into the top level."""
        self.own_top_level.update(names)
