"""Measurements a draft reads: what it asks for, and what the caller's measurement cache answers.

``measure_matmul(...)``, ``measure_copy(...)``, ``measure_collective(...)``
and ``measure(f, ...)`` never run anything in the engine: each call becomes a
:class:`MeasureRequest` (what to measure, on which device, where in which
draft), and the caller's :class:`MeasurementSource` answers it from the
measurement cache that ``margin measure`` fills (``.margin/measurements.json``,
kept by ``server/measurements.py``).  The engine stays deterministic: the
same cache, the same answers.

A request is identified by :func:`request_key`, a hash of its spec (the
kernel and its sizes, or the python calc blocks' digest, the function and its
argument shapes), together with the device it was measured on.  How it was
measured (samples, seconds) is provenance, not part of the key.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import Any, Protocol

from scaling_core.records import record
from scaling_core.text import Span

#: A coefficient of variation above this makes a measurement too noisy for a verdict.
NOISY_CV = 0.1


class Found(StrEnum):
    """What the cache has for a request."""

    #: A measurement of exactly this request on the device.
    FOUND = "found"
    #: Nothing for this request on the device.
    MISSING = "missing"
    #: This call was measured, but for a different request (its sizes or its code changed since).
    STALE = "stale"
    #: No device named, and the request was measured on several: which one is meant is not known.
    AMBIGUOUS = "ambiguous"


@record
class MeasureRequest:
    """One measurement a draft asks for."""

    #: What is measured: ``{"op": "matmul", "B": ..., "D": ..., "F": ..., "dtype": "bfloat16"}`` (JSON values).
    spec: dict[str, Any]
    #: The catalog chip (or slice) named by the call's last argument; "" when the call names none.
    device: str
    #: The draft, as the analysis was given it.
    path: str
    #: The call as written (with :attr:`path`, it tells a changed request from a new one).
    call: str
    span: Span

    @property
    def key(self) -> str:
        """The hash of :attr:`spec` (see :func:`request_key`)."""
        return request_key(self.spec)


def request_key(spec: dict[str, Any]) -> str:
    """A stable hash of a request's spec: equal specs, equal keys, on any machine."""
    import hashlib  # only for drafts that measure (off the start-up path)
    import json

    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:24]


@record
class Measurement:
    """The cache's answer to one request."""

    found: Found
    #: The device it was measured on (or, when missing, the one asked for; "" for any).
    device: str = ""
    #: ``median_s``, ``min_s``, ``p90_s``, ``compile_s`` (seconds), ``cv``, ``n`` (samples).
    values: dict[str, float] = field(default_factory=dict)
    #: One line of provenance: when, where, with which JAX (or, when stale, what it was measured for).
    about: str = ""
    #: Provenance for hover, each as text: ``device_kind``, ``host``, ``date``, ``jax``, ``method``, ``request``.
    details: dict[str, str] = field(default_factory=dict)


class MeasurementSource(Protocol):
    """Answers measurement requests (from the committed cache, in ``margin check`` and the editor)."""

    def lookup(self, request: MeasureRequest) -> Measurement:
        """What the cache has for ``request``."""
        ...


__all__ = ["NOISY_CV", "Found", "MeasureRequest", "Measurement", "MeasurementSource", "request_key"]
