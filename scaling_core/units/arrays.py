"""Sweep magnitudes: NumPy, loaded the first time a document makes an array.

A magnitude is a ``float`` or, for a sweep (``[1, 2, 4]``, ``range(…)``), a
``numpy.ndarray`` of float64.  Most drafts never sweep, and importing NumPy
costs ~60 ms of every ``margin`` start (a tenth of the language server's
start-up budget), so it is imported only when the first array is built.
Until then no array can exist, so :func:`is_array` needs no import.

Array arithmetic must not print NumPy's RuntimeWarnings (overflow, 0/0): the
evaluator reports those itself as diagnostics.  Evaluation therefore runs
inside :func:`quiet_arrays`, which ignores floating-point errors for the
current thread, including when NumPy is first imported part-way through.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType, TracebackType
from typing import Any

_local = threading.local()


def numpy() -> ModuleType:
    """The ``numpy`` module, imported on first use (inside any open :func:`quiet_arrays`)."""
    module: ModuleType | None = sys.modules.get("numpy")
    if module is None or not hasattr(module, "errstate"):
        import numpy  # lazily: ~60 ms of start-up that drafts without sweeps never pay

        module = numpy
    if getattr(_local, "depth", 0) and getattr(_local, "late", None) is None:
        late = module.errstate(all="ignore")
        late.__enter__()
        _local.late = late
    return module


def is_array(value: object) -> bool:
    """Whether a magnitude is a sweep (a ``numpy.ndarray``) rather than a float."""
    if type(value) is float:
        return False
    module = sys.modules.get("numpy")
    return module is not None and isinstance(value, module.ndarray)


class quiet_arrays:  # noqa: N801 - used like a function: ``with quiet_arrays():``
    """Ignore NumPy floating-point errors in this block (re-entrant, per thread)."""

    def __enter__(self) -> None:
        module = sys.modules.get("numpy")
        self._state: Any = module.errstate(all="ignore") if module is not None and hasattr(module, "errstate") else None
        if self._state is not None:
            self._state.__enter__()
        else:
            _local.depth = getattr(_local, "depth", 0) + 1

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._state is not None:
            self._state.__exit__(kind, error, trace)
            return
        _local.depth -= 1
        late = getattr(_local, "late", None)
        if _local.depth == 0 and late is not None:
            _local.late = None
            late.__exit__(kind, error, trace)


def largest(value: object) -> float:
    """The largest element of a sweep, or the float itself."""
    return float(numpy().max(value)) if is_array(value) else float(value)  # type: ignore[arg-type]


def typical(value: object) -> float:
    """The median absolute finite element of a sweep, or the absolute value of a float."""
    if not is_array(value):
        return abs(float(value))  # type: ignore[arg-type]
    np = numpy()
    finite = np.abs(value[np.isfinite(value)])  # type: ignore[index]
    return float(np.median(finite)) if finite.size else 0.0
