"""Immutable records that are cheap to make: frozen for the type checker, plain data classes at run time.

A frozen data class sets each field through ``object.__setattr__`` in its
``__init__``, three times slower than a plain one: 750 ns against 250 ns for a
record of three fields on this project's machine.  An analysis makes a record
for every syntax node, region, value, check and reference, and those frozen
``__init__`` calls were 12% of an analysis of the bench's book-like draft.

:func:`record` is a :func:`dataclasses.dataclass` that mypy sees as frozen
(``dataclass_transform(frozen_default=True)``): an assignment to a field is a
type error, and CI's mypy gate rejects it.  At run time the class is not frozen,
so nothing stops an assignment there; it keeps the frozen class's equality and
field hash (``unsafe_hash``), so records still work as dict keys and set members.
Code that fills a cache field after construction (``object.__setattr__``)
works unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, dataclass_transform, overload

_Class = TypeVar("_Class", bound=type)


@overload
def record(cls: _Class, /) -> _Class: ...


@overload
def record(*, slots: bool = False, eq: bool = True) -> Callable[[_Class], _Class]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _Class | None = None, /, *, slots: bool = False, eq: bool = True) -> Any:
    """``@record`` or ``@record(slots=..., eq=...)``: an immutable record (see the module)."""

    def make(klass: type[Any]) -> Any:
        hashed = eq and "__hash__" not in klass.__dict__  # a frozen data class's field hash, or the class's own
        return dataclass(slots=slots, eq=eq, unsafe_hash=hashed)(klass)

    return make if cls is None else make(cls)
