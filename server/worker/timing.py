"""Timing kernels on the worker's devices (imports JAX; runs only in ``margin worker``).

Method (``../shared/reference/jax-notes.md`` §2): inputs are built on the
device before any timing; the function is compiled ahead of time and the
compile time is reported separately; a few warm-up calls; then samples, each
ending in ``block_until_ready``, until there are at least
:attr:`Method.min_samples` of them **and** :attr:`Method.min_seconds` have
passed.  A kernel faster than :attr:`Method.batch_seconds` is dispatched
several times per sample (``inner`` calls, one block at the end) so that the
dispatch overhead does not swamp it; the reported times are per call.  The
copy benchmark donates its buffer (``x = f(x)``), so no fresh output buffer
is paged in per call.  With several processes (``jax.distributed``) a barrier
runs inside every sample, so a sample is the slowest host's.

Each ``measure_*`` returns the summary of :func:`summary`: every sample,
median (the measured time), min (the attainable one), p90, CV, and the
compile time.  ``should_stop`` is called between warm-ups and samples (a
cancel or a deadline raises there; a kernel in flight cannot be interrupted).
"""

from __future__ import annotations

import importlib
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax as _jax
import jax.numpy as _jnp

# JAX's annotations differ across the supported versions (0.6.2 to 0.10): used untyped here.
jax: Any = _jax
jnp: Any = _jnp

#: The collectives ``measure_collective`` knows, by the word a draft writes.
COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "ppermute")


@dataclass(frozen=True)
class Method:
    """How many samples to take (tests turn these down)."""

    min_samples: int = 20
    min_seconds: float = 0.5
    warmup: int = 3
    #: A call faster than this is dispatched several times per sample.
    batch_seconds: float = 1e-3
    #: Never more samples than this (a very fast kernel would otherwise take thousands).
    max_samples: int = 2000

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Method:
        """The method a request asks for (defaults for what it does not say)."""
        given = {
            k: spec[k] for k in ("min_samples", "min_seconds", "warmup", "batch_seconds", "max_samples") if k in spec
        }
        method = cls(**given)
        if (
            method.min_samples < 2
            or method.max_samples < method.min_samples
            or method.min_seconds < 0
            or method.warmup < 0
        ):
            raise ValueError("a method needs 2 <= min_samples <= max_samples, min_seconds >= 0, warmup >= 0")
        return method


Stop = Callable[[], None]


def measure(spec: dict[str, Any], should_stop: Stop, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one measurement request (``spec["op"]``: matmul, copy, collective, function)."""
    method = Method.from_spec(dict(spec.get("method", {})))
    op = spec.get("op")
    if op == "matmul":
        return measure_matmul(int(spec["B"]), int(spec["D"]), int(spec["F"]), str(spec["dtype"]), method, should_stop)
    if op == "copy":
        return measure_copy(int(spec["bytes"]), method, should_stop)
    if op == "collective":
        kind, nbytes, axis = str(spec["kind"]), int(spec["bytes"]), int(spec["axis_size"])
        return measure_collective(kind, nbytes, axis, method, should_stop)
    if op == "function":
        if namespace is None or not callable(namespace.get(str(spec["function"]))):
            raise LookupError(f"{spec.get('function')} is not a function of the python calc blocks")
        args = [(str(dtype), [int(d) for d in dims]) for dtype, dims in spec.get("args", [])]
        return measure_function(namespace[str(spec["function"])], args, method, should_stop)
    raise ValueError(f"unknown measurement {op!r}")


def _device() -> Any:
    return jax.local_devices()[0]


def _random(key: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.floating):
        return jax.random.normal(key, shape, jnp.float32).astype(dtype)
    return jnp.ones(shape, dtype)


def measure_matmul(B: int, D: int, F: int, dtype: str, method: Method, should_stop: Stop) -> dict[str, Any]:  # noqa: N803
    """Time ``x @ w`` for ``x: dtype[B, D]``, ``w: dtype[D, F]`` on the first local device."""
    with jax.default_device(_device()):
        kx, kw = jax.random.split(jax.random.key(0))
        x, w = _random(kx, (B, D), dtype), _random(kw, (D, F), dtype)
        compiled, compile_s = _compile(jax.jit(lambda a, b: a @ b), x, w)
        return _time(lambda state: compiled(x, w), None, method, should_stop, compile_s)


def measure_copy(nbytes: int, method: Method, should_stop: Stop) -> dict[str, Any]:
    """Time reading and writing ``nbytes`` (``x * 2`` in float32, the buffer donated: in place)."""
    count = max(1, nbytes // 4)
    with jax.default_device(_device()):
        x = jnp.ones((count,), jnp.float32)
        double = jax.jit(lambda a: a * 2, donate_argnums=0)
        compiled, compile_s = _compile(double, x)
        return _time(compiled, x, method, should_stop, compile_s)


def measure_collective(kind: str, nbytes: int, axis_size: int, method: Method, should_stop: Stop) -> dict[str, Any]:
    """Time one collective over ``axis_size`` devices, ``nbytes`` being each device's operand (float32)."""
    NamedSharding, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec  # noqa: N806 - JAX's names

    if kind not in COLLECTIVES:
        raise ValueError(f"unknown collective {kind!r}; known: {', '.join(COLLECTIVES)}")
    devices = jax.devices()
    if axis_size > len(devices):
        raise ValueError(f"{axis_size} devices asked for, {len(devices)} present")
    mesh = jax.sharding.Mesh(devices[:axis_size], ("x",))
    count = max(axis_size, nbytes // 4 // axis_size * axis_size)  # divisible by the axis: scatter and all-to-all
    sharding = NamedSharding(mesh, P("x"))
    body = {
        "all_gather": lambda a: jax.lax.all_gather(a, "x", tiled=True),
        "reduce_scatter": lambda a: jax.lax.psum_scatter(a, "x", tiled=True),
        "all_reduce": lambda a: jax.lax.psum(a, "x"),
        "all_to_all": lambda a: jax.lax.all_to_all(a, "x", 0, 0, tiled=True),
        "ppermute": lambda a: jax.lax.ppermute(a, "x", [(i, (i + 1) % axis_size) for i in range(axis_size)]),
    }[kind]
    mapped = _shard_map(body, mesh, P("x"), P("x"))
    x = jax.jit(lambda: jnp.ones((count * axis_size,), jnp.float32), out_shardings=sharding)()
    compiled, compile_s = _compile(jax.jit(mapped), x)
    return _time(lambda state: compiled(x), None, method, should_stop, compile_s)


def _shard_map(body: Callable[[Any], Any], mesh: Any, in_spec: Any, out_spec: Any) -> Any:
    shard_map = getattr(jax, "shard_map", None)
    if shard_map is not None:
        return shard_map(body, mesh=mesh, in_specs=in_spec, out_specs=out_spec, check_vma=False)
    old: Any = importlib.import_module("jax.experimental.shard_map").shard_map  # JAX before 0.7
    return old(body, mesh=mesh, in_specs=in_spec, out_specs=out_spec, check_rep=False)


def measure_function(
    function: Any, args: list[tuple[str, list[int]]], method: Method, should_stop: Stop
) -> dict[str, Any]:
    """Time an author's function on random inputs of these shapes (first local device)."""
    with jax.default_device(_device()):
        keys = jax.random.split(jax.random.key(0), max(1, len(args)))
        inputs = [_random(key, tuple(dims), dtype) for key, (dtype, dims) in zip(keys, args)]
        compiled, compile_s = _compile(jax.jit(function), *inputs)
        return _time(lambda state: compiled(*inputs), None, method, should_stop, compile_s)


def _compile(jitted: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    return compiled, time.perf_counter() - start


def _barrier() -> Callable[[str], None] | None:
    if jax.process_count() <= 1:
        return None
    sync: Callable[[str], None] = importlib.import_module("jax.experimental.multihost_utils").sync_global_devices
    return sync


def _time(
    step: Callable[[Any], Any], state: Any, method: Method, should_stop: Stop, compile_s: float
) -> dict[str, Any]:
    """Warm up, choose the batch, take samples; ``step(state) -> state``.

    ``state`` is a donated buffer threaded through the calls (the copy), or None
    when each call's output is independent (then every output of a sample is awaited).
    """
    threaded = state is not None
    barrier = _barrier()
    for _ in range(method.warmup):
        should_stop()
        state = jax.block_until_ready(step(state))
    should_stop()
    start = time.perf_counter()
    state = jax.block_until_ready(step(state))
    once = time.perf_counter() - start
    inner = 1 if once >= method.batch_seconds else min(1000, math.ceil(method.batch_seconds / max(once, 1e-9)))
    if barrier is not None:
        barrier("margin-measure-start")
    samples: list[float] = []
    began = time.perf_counter()
    while len(samples) < method.max_samples and (
        len(samples) < method.min_samples or time.perf_counter() - began < method.min_seconds
    ):
        should_stop()
        t0 = time.perf_counter()
        outs = []
        for _ in range(inner):
            state = step(state)
            if not threaded:
                outs.append(state)
        jax.block_until_ready(state if threaded else outs)
        if barrier is not None:
            barrier("margin-measure-sample")
        samples.append((time.perf_counter() - t0) / inner)
        del outs
    return summary(samples, compile_s=compile_s, inner=inner, warmup=method.warmup)


def summary(samples: list[float], **extra: Any) -> dict[str, Any]:
    """Median (the measured time), min (attainable), p90, CV and every sample, in seconds."""
    ordered = sorted(samples)
    mean = statistics.fmean(samples)
    cv = statistics.stdev(samples) / mean if len(samples) > 1 and mean > 0 else 0.0
    return {
        "median_s": statistics.median(samples),
        "min_s": ordered[0],
        "p90_s": ordered[int(0.9 * (len(ordered) - 1))],
        "cv": cv,
        "n": len(samples),
        "samples": samples,
        **extra,
    }
