"""Generated drafts for the benchmarks.

``book_like`` imitates a scaling-book chapter: mostly prose with lists,
tables and LaTeX, a calc block every ~50 lines (~2,000 statements per 10,000
lines, the density of a real chapter), a few checked code spans and claims per
section, and a problem with a hidden answer every other section.  ``dense``
packs a calculation into almost every line, as a stress test.
Every check in both passes, so the figures measure work, not error paths.
"""

from __future__ import annotations

PROSE = (
    "The roofline model asks which of two limits binds: the chip's arithmetic throughput or the bandwidth that\n"
    "feeds it. For a matmul the answer depends on the batch, since weights are loaded once per batch while the\n"
    "FLOPs grow with every token. We write $T_\\text{math} = \\text{FLOPs} / C$ and\n"
    "$T_\\text{comms} = \\text{bytes} / W$, and the time is at least the larger of the two, at most their sum.\n"
    "In practice XLA overlaps communication with compute, so the maximum is the better estimate when the\n"
    "kernel is well pipelined, and the sum is the right estimate when it is not.\n"
)
SECTION = """\
## Section {i}: batch {b}

{prose}
```calc
B_{i} = {b}
D_{i} = 8192
F_{i} = 4 * D_{i}
flops_{i} = 2 * B_{i} * D_{i} * F_{i} -> FLOP
weights_{i} = 2 * D_{i} * F_{i} byte
acts_{i} = 2 * B_{i} * D_{i} byte + 2 * B_{i} * F_{i} byte
bytes_{i} = weights_{i} + acts_{i}
intensity_{i} = flops_{i} / bytes_{i} -> FLOP/byte
t_{i} = flops_{i} / tpu_v5e.flops_bf16 -> us
t_{i} ≈ {us} us
```

A batch of {b} tokens gives `2 * {b} * 8192 * 32768 = {flops}` FLOPs, which at `1.97e14` FLOP/s is about
{us} µs<!-- ≈ t_{i} -->. The weights alone are `2 * 8192 * 32768 = 5.4e8` bytes and the intensity is
{calc_role}. Compare with the critical intensity `1.97e14 / 8.2e11 = 240`.

- weights: `bf16[8192, 32768]`, loaded once per step
- activations: `bf16[B, 8192]` in and `bf16[B, 32768]` out
- the answer changes with `int8` weights

| quantity | value |
|---|---|
| FLOPs | {flops} |
| time | {us} µs |

{prose}{problem}
"""
PROBLEM = """
**Question {i} [roofline]:** Is the matmul with B = {b} compute-bound on a v5e?

{{% details Click here for the answer. %}}

```calc
B_crit = tpu_v5e.flops_bf16 / tpu_v5e.hbm_bw -> FLOP/byte
```

The critical batch is about 240<!-- ≈ B_crit * 1 byte/FLOP -->, so a batch of {b} is {verdict}.

{{% enddetails %}}
"""
DENSE_LINE = "Step {i}: `2 * {b} * 8192 = {v}` and `{b} * 4 = {w}`, so about {us} µs<!-- ≈ {b} * 2 * 8192 * 8192 / 1.97e14 s -->.\n"


def _numbers(b: int) -> dict[str, str]:
    flops = 2 * b * 8192 * 32768
    return {"b": str(b), "flops": f"{flops:.2e}".replace("e+", "e"), "us": f"{flops / 197e12 * 1e6:.3g}"}


def book_like(lines: int = 10_000) -> str:
    """A scaling-book-like chapter of about ``lines`` lines."""
    parts = ["# A generated chapter on rooflines\n\n"]
    total = 2
    i = 0
    while total < lines:
        b = 64 * (i % 16 + 1)
        values = _numbers(b)
        problem = PROBLEM.format(i=i, b=b, verdict="compute-bound" if b > 240 else "memory-bound") if i % 2 else ""
        role = f"{{calc}}`intensity_{i}`"
        section = SECTION.format(i=i, prose=PROSE, problem=problem, calc_role=role, **values)
        parts.append(section)
        total += section.count("\n")
        i += 1
    return "".join(parts)


def dense(lines: int = 10_000) -> str:
    """A stress corpus: two checked code spans and a claim on every line."""
    out = ["# Dense\n\n"]
    for i in range(lines - 2):
        b = 64 * (i % 16 + 1)
        us = f"{b * 2 * 8192 * 8192 / 1.97e14 * 1e6:.3g}"
        out.append(DENSE_LINE.format(i=i, b=b, v=2 * b * 8192, w=b * 4, us=us))
    return "".join(out)
