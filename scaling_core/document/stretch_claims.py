"""What a stretch's waiting claims need when its runs are gathered (``gathered.py``).

A claim that waits for a name below it is either *settled* by the stretch
(its own definitions below the claim are what it waits for, and the
resolution its step recorded read them as they are: added with the stretch,
not resolved again), or deferred when the stretch is replayed, as a run's
replay defers it.  A deferred claim that mentions no name the stretch
defines reads the same names wherever in the stretch it is deferred
(:func:`names_defined`), so the gathered pieces are not split there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scaling_core.document.effects import Effects
from scaling_core.document.forward import Waiting, binding_stamp, waits
from scaling_core.document.results import Binding


@dataclass(slots=True, eq=False)
class _Candidate:
    """A claim that waits, while the stretch is gathered: the names it waits for and the first definitions below."""

    step: Waiting
    waiting: set[str]
    #: Each name it mentions: a definition of the stretch above it (by position), or looked up outside.
    above: dict[str, int]
    below: dict[str, int] = field(default_factory=dict)


def names_defined(runs: Sequence[Any]) -> frozenset[str]:
    """Every name the runs' steps define."""
    return frozenset(binding.name for run in runs if run is not None for step in run.steps
                     if isinstance(step, Effects) for binding in step.bindings)  # fmt: skip


def imports_nothing(runs: Sequence[Any]) -> bool:
    """Whether none of the runs' steps imports a file."""
    return not any(isinstance(step, Effects) and step.imports for run in runs if run is not None for step in run.steps)


def settled_claims(runs: Sequence[Any], stamps: dict[str, Any]) -> dict[int, tuple[dict[str, int], Effects]] | None:
    """The stretch's waiting claims resolved by its own definitions below them, by their step's id: the
    definitions each reads (by position) and its recorded resolution.  None if it crosses problems or imports."""
    defined: dict[str, int] = {}
    bindings: list[Binding] = []
    waiting_for: dict[str, list[_Candidate]] = {}
    found: list[_Candidate] = []
    for run in runs:
        if run is None:
            continue
        for step in run.steps:
            if type(step) is Waiting:
                candidate = _candidate(step, defined, stamps)
                if candidate is not None:
                    found.append(candidate)
                    for name in candidate.waiting:
                        waiting_for.setdefault(name, []).append(candidate)
                continue
            if not isinstance(step, Effects) or step.imports:
                return None  # a chunk's next scope (the stretch crosses problems), or an import: replayed run by run
            for binding in step.bindings:
                for candidate in waiting_for.pop(binding.name, ()):
                    candidate.below.setdefault(binding.name, len(bindings))
                defined[binding.name] = len(bindings)
                bindings.append(binding)
    settled = {}
    for candidate in found:
        resolution = _resolution(candidate, bindings) if len(candidate.below) == len(candidate.waiting) else None
        if resolution is not None:
            settled[id(candidate.step)] = ({**candidate.above, **candidate.below}, resolution)
    return settled


def _candidate(step: Waiting, defined: dict[str, int], stamps: dict[str, Any]) -> _Candidate | None:
    """A waiting claim as its deferral would see it: the names it waits for, the stretch's definitions above it."""
    if not step.names or step.resolved is None:
        return None
    above, waiting = {}, set()
    for name in step.names:
        if name in defined:
            above[name] = defined[name]
        elif name not in stamps:
            return None  # not among the names the stretch's key holds: deferred as it is
        elif stamps[name] is None:
            waiting.add(name)
    return _Candidate(step, waiting, above) if waiting else None


def _resolution(candidate: _Candidate, bindings: list[Binding]) -> Effects | None:
    """The claim's recorded resolution, if it read the stretch's definitions below it as they are (else None)."""
    assert candidate.step.resolved is not None
    read, effects = candidate.step.resolved
    below = tuple([(name, binding_stamp(bindings[at])) for name, at in sorted(candidate.below.items())])
    if read != below or effects.bindings or effects.imports or (effects.diagnostics and waits(effects)):
        return None
    return effects
