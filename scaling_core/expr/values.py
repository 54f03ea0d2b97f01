"""What the calc language computes, and how its failures are worded.

A value is a :class:`~scaling_core.units.quantity.Quantity`, a :class:`Record`
(a chip) or a :class:`ShapeValue` (``bf16[8, 128]``).  This module sits under
the evaluator, the constant reader, the chip catalog and the formula library,
so each of them can share these types without importing one another.

:func:`did_you_mean` is the one did-you-mean of the engine: names, units,
fields, functions and prose units all go through it.
"""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import field

from scaling_core.diagnostics import Diagnostic
from scaling_core.expr.parser import DTYPE_BYTES
from scaling_core.records import record
from scaling_core.units import dimension
from scaling_core.units.display import format_quantity
from scaling_core.units.quantity import Quantity, UnitError

_BYTES_DIM = dimension.pack({"information": 1})

#: How close a spelling must be to a known one to be suggested (difflib's ratio):
#: names, fields, functions, and units where only a unit can stand (after ``->``).
CUTOFF = 0.6
#: For a word right after a number in a calc line (``5 sceonds``): it may be a
#: name with a missing ``*`` as well as a misspelt unit, so only a closer miss is offered.
UNIT_AFTER_NUMBER_CUTOFF = 0.7
#: For a word after a prose number: prose is English, so only a close miss
#: (``sceonds``) is a typo of a unit, not an ordinary word (``ways``).
PROSE_CUTOFF = 0.8


#: How many sweeps of the largest size one analysis may compute in all (every intermediate result counts).
ELEMENT_BUDGET_SWEEPS = 20
#: The start of the message of the E003 that a spent budget gives (such effects are never replayed).
BUDGET_SPENT = "this document's budget"
#: The clock of time budgets (a test may replace it).
clock = time.monotonic
#: The start of the message of the E003 where an analysis ran out of time.
OUT_OF_TIME = f"{BUDGET_SPENT} of time is spent"


@record
class Limits:
    """Evaluation bounds; every evaluation obeys them."""

    #: The largest sweep one statement may build.
    max_array_elements: int = 1_000_000
    #: Seconds one analysis (with what it imports) may evaluate for; then it stops with E003
    #: (``analyze_document`` sets it; a calculator session has none).
    max_seconds: float = math.inf
    #: Sweep elements one analysis may compute in all (setting ``max_total_elements``); None: 20 × the above.
    total_elements: int | None = None

    @property
    def max_total_elements(self) -> int:
        """Sweep elements one analysis (with what it imports) may compute in all."""
        if self.total_elements is not None:
            return self.total_elements
        return ELEMENT_BUDGET_SWEEPS * self.max_array_elements


class Budget:
    """What one analysis has spent of its :class:`Limits`: sweep elements computed, and time.

    Shared by an analysis and the analyses of what it imports.  Elements are
    counted as each sweep is computed (every intermediate result), so the
    memory and time a document can take are bounded however it is written.
    """

    __slots__ = ("limits", "elements", "deadline", "stopped")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.elements = 0
        self.deadline = clock() + limits.max_seconds
        #: Set once the time is spent: the analysis evaluates nothing more.
        self.stopped = False

    def room(self, count: int) -> str | None:
        """Why ``count`` more elements cannot be computed, or None when they can."""
        if self.elements + count <= self.limits.max_total_elements:
            return None
        total = self.limits.total_elements
        setting = "max_total_elements" if total is not None else f"{ELEMENT_BUDGET_SWEEPS} × max_array_elements"
        return (
            f"{BUDGET_SPENT} of {self.limits.max_total_elements:,} sweep elements is spent "
            f"({setting}); this statement needs {count:,} more"
        )

    def out_of_time(self) -> str | None:
        """Why the analysis must stop now (its time is spent), or None; from then on :attr:`stopped` is set."""
        if self.stopped or clock() <= self.deadline:
            return None
        self.stopped = True
        return f"{OUT_OF_TIME}: analysis stopped here after {self.limits.max_seconds:g} s; nothing below is checked"


@record
class Record:
    """A named record with quantity fields (a chip)."""

    name: str
    title: str
    fields: dict[str, Quantity]
    sources: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    kind: str = "chip"
    #: Each field as written in the data (``"16 GiB"``); derived fields show their formula.
    texts: dict[str, str] = field(default_factory=dict)
    #: Fields whose value is not known, with the reason (``xla_cost`` of a custom call): using one
    #: skips the statement with an information T003 instead of a verdict.
    unknown: dict[str, str] = field(default_factory=dict)
    #: ``record["key"]``: a chip's slice (``tpu_v5p["4x4x4"]``) or a slice's axis; a str says why the key is not legal.
    #: Set by ``hardware/slices.py``; None for records that cannot be indexed.
    slicer: Callable[[str], Record | str] | None = field(default=None, compare=False, repr=False)


@record
class ShapeValue:
    """The value of ``bf16[8, 128, 8192]``: fields ``bytes``, ``size``, ``bits``."""

    dtype: str
    dims: tuple[float, ...]

    def fields(self) -> dict[str, Quantity]:
        """The shape's fields as quantities."""
        size = math.prod(self.dims)
        nbytes = size * DTYPE_BYTES[self.dtype]
        return {
            "size": Quantity(float(size), 0, True, "element"),
            "bytes": Quantity(float(nbytes), _BYTES_DIM),
            "bits": Quantity(float(nbytes), _BYTES_DIM),
        }


Value = Quantity | Record | ShapeValue

#: The kind of record a name is bound to when its value is not known (see :func:`unknown_value`).
UNKNOWN_KIND = "unknown"


def unknown_value(name: str, reason: str) -> Record:
    """The value of a definition whose value is not known (T003: ``c = xla_cost(f, ...)`` of a block that did
    not run): every use of it is not known either, for the same reason, so a check using it is skipped."""
    return Record(name, f"not known: {reason}", {}, kind=UNKNOWN_KIND, unknown={"": reason})


class EvaluationError(Exception):
    """Stops evaluation of one statement; carries the diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def describe_unit(quantity: Quantity) -> str:
    """A unit's name for messages: ``byte·s/FLOP``, or ``no unit``."""
    name = dimension.base_unit_name(quantity.dim)
    return name if name else "no unit"


def mismatch_message(error: UnitError) -> str:
    """A message naming both units and the likely fix."""
    left, right = describe_unit(error.left), describe_unit(error.right)
    verbs = {"add": "add", "subtract": "subtract", "compare": "compare", "convert": "convert"}
    if error.operation == "convert":
        return f"cannot convert {format_quantity(error.left)} ({left}) to {right}: the dimensions differ"
    if error.operation == "power":
        return f"cannot raise {left} to a fractional power that leaves a fractional unit"
    verb = verbs.get(error.operation, error.operation)
    hint = _likely_fix(error.left.dim, error.right.dim)
    return f"cannot {verb} {left} and {right}" + (f"; {hint}" if hint else "")


def _likely_fix(left: int, right: int) -> str:
    """Suggest the factor that would reconcile two dimensions."""
    needed = dimension.base_unit_name(right - left)
    if not needed:
        return ""
    if needed.startswith("1/"):
        return f"divide the left side by a quantity in {needed[2:]}, or drop a stray factor"
    return f"multiply the left side by a quantity in {needed}, or drop a stray factor"


def did_you_mean(spelling: str, candidates: Iterable[str], *, cutoff: float = CUTOFF) -> str | None:
    """The note ``did you mean 'a' or 'b'?`` for up to three known spellings close to ``spelling``.

    ``candidates`` are the spellings that would have been accepted (names in
    scope, units, fields, functions); their order does not matter.  ``cutoff``
    is :data:`CUTOFF` but where a stricter one applies (:data:`UNIT_AFTER_NUMBER_CUTOFF`,
    :data:`PROSE_CUTOFF`).  None when nothing is close enough.
    """
    size = len(spelling)
    # difflib's first test (real_quick_ratio, from the lengths alone) rejects the rest: tried first, in C speed.
    close = [c for c in candidates if 2.0 * min(size, len(c)) >= (cutoff - 1e-9) * (size + len(c))]
    matches = difflib.get_close_matches(spelling, close, n=3, cutoff=cutoff)
    return "did you mean " + " or ".join(f"'{m}'" for m in matches) + "?" if matches else None


__all__ = [
    "CUTOFF",
    "PROSE_CUTOFF",
    "UNIT_AFTER_NUMBER_CUTOFF",
    "BUDGET_SPENT",
    "OUT_OF_TIME",
    "ELEMENT_BUDGET_SWEEPS",
    "Budget",
    "EvaluationError",
    "Limits",
    "Record",
    "ShapeValue",
    "Value",
    "describe_unit",
    "did_you_mean",
    "mismatch_message",
    "unknown_value",
]
