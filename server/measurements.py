"""The measurement cache, ``.margin/measurements.json`` at the project root: meant to be committed.

``margin measure`` fills it; ``margin check`` (and the editor) read it, so CI
checks measured numbers without any accelerator.  The file is JSON, sorted,
one entry per request and device::

    {"version": 1,
     "entries": {"<request key>": {"<device>": {
         "request": {"op": "matmul", "B": 4096, ...},
         "site": {"path": "examples/measured-roofline.md", "call": "measure_matmul(bf16[B, D], bf16[D, F], h100)"},
         "result": {"median_s": ..., "min_s": ..., "p90_s": ..., "cv": ..., "n": 20, "compile_s": ...,
                    "samples": [...]},
         "provenance": {"device_kind": "NVIDIA H100 80GB HBM3", "host": ..., "jax": ..., "date": ..., ...}}}}}

The request key is :func:`scaling_core.measured.request_key` of the request;
the device is the catalog chip the target says it is (``chip = "h100"``), or
else the device kind JAX reported (``cpu``).  The site (the draft and the call
as written) tells a changed request (stale: warning T005) from a new one
(missing: untested).

Writes go through a temporary file and a rename, under a lock, after merging
with what another ``margin measure`` may have written meanwhile: a kill in
the middle of a write leaves the old file whole.  A file that cannot be read
is ignored (every request is then missing) and rewritten by the next
``margin measure``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scaling_core.measured import Found, Measurement, MeasureRequest
from server.workspace import write_atomically

#: Where the cache lives, relative to the project root.
CACHE_FILE = Path(".margin") / "measurements.json"
VERSION = 1


class MeasurementCache:
    """The cache of one project: a :class:`~scaling_core.measured.MeasurementSource` for the engine."""

    def __init__(self, root: Path, path: Path | None = None) -> None:
        self.root = root
        self.path = path or root / CACHE_FILE
        self._entries: dict[str, dict[str, dict[str, Any]]] | None = None
        self._problem = ""

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        if self._entries is None:  # read on the first question: a check without measure_* calls reads nothing
            self._entries, self._problem = read_entries(self.path)
        return self._entries

    @property
    def entries(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Request key -> device -> entry."""
        return self._load()

    @entries.setter
    def entries(self, value: dict[str, dict[str, dict[str, Any]]]) -> None:
        self._entries = value

    @property
    def problem(self) -> str:
        """Why the file could not be read ("" when it could, or does not exist)."""
        self._load()
        return self._problem

    # -- reading ---------------------------------------------------------------------
    def site(self, request: MeasureRequest) -> dict[str, str]:
        """The draft (relative to the project root) and the call as written."""
        path = request.path
        with contextlib.suppress(ValueError, OSError):
            path = Path(os.path.abspath(path)).relative_to(self.root.resolve()).as_posix()
        return {"path": path, "call": request.call}

    def lookup(self, request: MeasureRequest) -> Measurement:
        """What the cache has for ``request`` (found, ambiguous, stale or missing)."""
        devices = self.entries.get(request.key, {})
        if request.device and request.device in devices:
            return _found(request.device, devices[request.device])
        if not request.device and len(devices) == 1:
            device, entry = next(iter(devices.items()))
            return _found(device, entry)
        if not request.device and len(devices) > 1:
            return Measurement(Found.AMBIGUOUS, "", about=", ".join(sorted(devices)))
        site = self.site(request)
        older = [(device, entry) for _key, device, entry in self._all()
                 if entry.get("site") == site and (not request.device or device == request.device)]  # fmt: skip
        if older:
            device, entry = max(older, key=lambda found: str(found[1].get("provenance", {}).get("date", "")))
            return Measurement(Found.STALE, device, about=f"{_describe(entry.get('request', {}))}, {_when(entry)}")
        why = f"{self.problem}; run margin measure" if self.problem else "run margin measure"
        return Measurement(Found.MISSING, request.device, about=why)

    def has(self, key: str, device: str = "") -> bool:
        """Whether ``key`` was measured on ``device`` (on any device when "")."""
        devices = self.entries.get(key, {})
        return device in devices if device else bool(devices)

    def _all(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for key, devices in self.entries.items():
            for device, entry in devices.items():
                yield key, device, entry

    # -- writing ---------------------------------------------------------------------
    def record(self, request: MeasureRequest, device: str, result: dict[str, Any], provenance: dict[str, Any]) -> None:
        """Remember a measurement of ``request`` on ``device`` (call :meth:`save` to write it)."""
        kept = {k: _round(v) for k, v in result.items() if k != "samples"}
        kept["samples"] = [_round(s) for s in result.get("samples", [])]
        self.entries.setdefault(request.key, {})[device] = {
            "request": request.spec, "site": self.site(request), "result": kept, "provenance": provenance,
        }  # fmt: skip

    def save(self) -> None:
        """Write the cache atomically, merged with entries another run wrote since it was read."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        ignore = self.path.parent / ".gitignore"
        if not ignore.exists():  # the cache is committed; its lock and a killed run's leftovers are not
            with contextlib.suppress(OSError):
                write_atomically(ignore, "*.lock\n*.margin-tmp\n")
        with _locked(self.path.with_name(self.path.name + ".lock")):
            for orphan in self.path.parent.glob(f".{self.path.name}.*.margin-tmp"):
                with contextlib.suppress(OSError):  # left by a run killed while writing (writers hold the lock)
                    orphan.unlink()
            on_disk, _problem = read_entries(self.path)
            for key, devices in self.entries.items():
                on_disk.setdefault(key, {}).update(devices)
            self.entries = on_disk
            text = json.dumps({"version": VERSION, "entries": on_disk}, indent=1, sort_keys=True, ensure_ascii=False)
            write_atomically(self.path, text + "\n")


def read_entries(path: Path) -> tuple[dict[str, dict[str, dict[str, Any]]], str]:
    """The entries of a cache file, and why it could not be read ("" when it could or does not exist)."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}, ""
    except (OSError, UnicodeDecodeError) as error:
        return {}, f"{CACHE_FILE} could not be read ({error})"
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {}, f"{CACHE_FILE} is not valid JSON"
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), dict):
        return {}, f"{CACHE_FILE} is not a version-{VERSION} measurement cache"
    entries: dict[str, dict[str, dict[str, Any]]] = {}
    for key, devices in data["entries"].items():
        if isinstance(devices, dict):
            good = {d: e for d, e in devices.items() if isinstance(e, dict) and isinstance(e.get("result"), dict)}
            if good:
                entries[str(key)] = good
    return entries, ""


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    """An exclusive lock on ``lock`` (POSIX ``flock``; no lock where there is none)."""
    try:
        import fcntl
    except ImportError:  # Windows: one margin measure at a time is the user's job
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _found(device: str, entry: dict[str, Any]) -> Measurement:
    result = entry.get("result", {})
    values = {k: float(v) for k, v in result.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return Measurement(Found.FOUND, device, values, _when(entry), _details(entry))


def _details(entry: dict[str, Any]) -> dict[str, str]:
    """The provenance hover shows, as text: device kind, host(s), date, JAX, how it was measured."""
    p = entry.get("provenance", {}) if isinstance(entry.get("provenance"), dict) else {}
    details = {key: str(p[key]) for key in ("device_kind", "host", "date", "jax") if p.get(key)}
    hosts = int(p.get("process_count") or 1) if isinstance(p.get("process_count"), int) else 1
    if hosts > 1 and "host" in details:
        details["host"] += f" and {hosts - 1} more"
    method = p.get("method")
    if isinstance(method, dict) and method:
        details["method"] = ", ".join(f"{k} {v}" for k, v in sorted(method.items()))
    return details


def _when(entry: dict[str, Any]) -> str:
    """One line of provenance: the date, the device kind and host, JAX's version, the samples."""
    p = entry.get("provenance", {}) if isinstance(entry.get("provenance"), dict) else {}
    parts = [str(p.get("date", "undated"))[:10]]
    if p.get("device_kind"):
        hosts = int(p.get("process_count") or 1)
        parts.append(f"{p['device_kind']} on {p.get('host', '?')}" + (f" and {hosts - 1} more" if hosts > 1 else ""))
    if p.get("jax"):
        parts.append(f"jax {p['jax']}")
    samples = entry.get("result", {}).get("n")
    if samples:
        parts.append(f"{int(samples)} samples")
    return ", ".join(parts)


def _describe(spec: Any) -> str:
    """What a request measured, in a few words (``matmul 4096x8192x8192 bfloat16``)."""
    if not isinstance(spec, dict):
        return "an unknown request"
    op = spec.get("op")
    if op == "matmul":
        return f"measured for matmul {spec.get('B')}x{spec.get('D')}x{spec.get('F')} {spec.get('dtype')}"
    if op == "copy":
        return f"measured for a copy of {spec.get('bytes')} bytes"
    if op == "collective":
        return f"measured for {spec.get('kind')} of {spec.get('bytes')} bytes over {spec.get('axis_size')} devices"
    if op == "function":
        shapes = ", ".join(f"{d}{list(s)}" for d, s in spec.get("args", []))
        return f"measured for {spec.get('function')}({shapes}) of other python calc blocks"
    return "an unknown request"


def _round(value: Any) -> Any:
    """Six significant digits: enough for timings, and a diff a reviewer can read."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    return value


def cache_for(root: Path | None) -> MeasurementCache:
    """The measurement cache of the project at ``root`` (the current folder when None)."""
    return MeasurementCache(root if root is not None else Path.cwd())


class LiveCache:
    """The editor's measurement source: the project's cache, read again whenever the file changes on disk.

    ``margin measure`` (or the editor's "Run measurement") rewrites the file;
    :meth:`refresh` notices by its modification time and size (one ``stat``),
    so a draft analysed after that reads the new entries.  Safe to call from
    any thread.
    """

    def __init__(self, root: Path | None) -> None:
        self.cache = cache_for(root)
        self._stamp = self._read_stamp()
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        """The cache file."""
        return self.cache.path

    def _read_stamp(self) -> tuple[int, int] | None:
        try:
            status = self.cache.path.stat()
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size

    def refresh(self) -> bool:
        """Read the file again on the next question if it changed since it was read; whether it did."""
        stamp = self._read_stamp()
        with self._lock:
            if stamp == self._stamp:
                return False
            self._stamp = stamp
            self.cache = MeasurementCache(self.cache.root, self.cache.path)
            return True

    def lookup(self, request: MeasureRequest) -> Measurement:
        """What the cache on disk has for ``request`` (read when first asked, again after a change)."""
        with self._lock:
            return self.cache.lookup(request)
