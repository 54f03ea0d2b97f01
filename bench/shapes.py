"""Draft shapes for the server benchmark: the realistic layouts issue 15 measures.

Each generator returns the text of one draft of about ``lines`` lines whose
checks all pass (``python -m bench.shapes`` prints the counts), so the figures
measure work, not error paths, but for ``failing`` and ``unknown``.  Besides the book-like
chapter of ``corpus.py``:

* ``forward``: sections that state a result in prose *before* the calc block
  that derives it (a claim reading a name defined below);
* ``giant``: one calc block of ~5,000 statements between prose;
* ``dense`` / ``dense_flat``: paragraphs of 100 lines, each line two checked
  code spans and a claim, with a heading before each paragraph or none;
* ``failing`` / ``unknown``: the book-like chapter with ~400 failing checks, or
  ~200 claims naming a misspelt name;
* ``workspace``: a root draft and leaves that ``import`` it, written to a folder;
* ``chain``: drafts each importing the previous one.

An :class:`EditPlan` says where a shape is edited: a digit changed in place
and a character typed, each near the top, the middle and the bottom.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import DENSE_LINE, PROSE, book_like

#: Where edits go, as fractions of the document's lines.
WHERE = {"top": 0.05, "middle": 0.5, "bottom": 0.95}


def _us(batch: int, d: int = 8192, f: int = 32768) -> str:
    return f"{2 * batch * d * f / 197e12 * 1e6:.3g}"


FORWARD_SECTION = """\
## Step {i}

At batch {b} the matmul takes about {us} µs<!-- ≈ t_{i} --> and its weights are {mb} MB<!-- ≈ w_{i} -->.

```calc
B_{i} = {b}
w_{i} = 2 * 8192 * 32768 byte -> MB
t_{i} = 2 * B_{i} * 8192 * 32768 FLOP / tpu_v5e.flops_bf16 -> us
```

So a step is {us} µs<!-- ≈ t_{i} --> once the weights are loaded.

"""


def forward(lines: int = 10_000) -> str:
    """Sections whose first claim reads a name the section's calc block defines below it."""
    parts, total, i = ["# Claims before their blocks\n\n"], 2, 0
    while total < lines:
        b = 64 * (i % 16 + 1)
        section = FORWARD_SECTION.format(i=i, b=b, us=_us(b), mb=f"{2 * 8192 * 32768 / 1e6:.3g}")
        parts.append(section)
        total += section.count("\n")
        i += 1
    return "".join(parts)


GIANT_GROUP = """\
# layer {g}: batch {b}
B_{g} = {b}
flops_{g} = 2 * B_{g} * D * F -> FLOP
t_{g} = flops_{g} / tpu_v5e.flops_bf16 -> us
t_{g} ≈ {us} us
"""


def giant(lines: int = 10_000, statements: int = 5_000) -> str:
    """One calc block of ``statements`` statements, prose before it, prose with claims after it."""
    groups = (statements - 2) // 4
    block = (
        "```calc\nD = 8192\nF = 4 * D\n"
        + "".join(GIANT_GROUP.format(g=g, b=64 * (g % 16 + 1), us=_us(64 * (g % 16 + 1))) for g in range(groups))
        + "```\n\n"
    )
    rest = max(0, lines - block.count("\n") - 2)
    paragraph = PROSE + "\n"
    before = paragraph * (rest // 2 // paragraph.count("\n"))  # half the prose before the block, half after
    after, count, g = [], 0, 0
    while count < rest - before.count("\n"):
        b = 64 * (g % 16 + 1)
        after.append(f"Layer {g} takes about {_us(b)} µs<!-- ≈ t_{g} --> on one v5e.\n" + paragraph)
        count += 1 + paragraph.count("\n")
        g = (g + 97) % groups
    return "# One big block\n\n" + before + block + "".join(after)


def dense(lines: int = 10_000, headings: bool = True, paragraph_lines: int = 100) -> str:
    """Paragraphs of ``paragraph_lines`` lines, each line two checked code spans and a claim."""
    parts, total, i, p = ["# Dense paragraphs\n\n"], 2, 0, 0
    while total < lines:
        if headings:
            parts.append(f"## Part {p}\n\n")
            total += 2
        for _ in range(paragraph_lines):
            b = 64 * (i % 16 + 1)
            us = f"{b * 2 * 8192 * 8192 / 1.97e14 * 1e6:.3g}"
            parts.append(DENSE_LINE.format(i=i, b=b, v=2 * b * 8192, w=b * 4, us=us))
            i += 1
        parts.append("\n")
        total += paragraph_lines + 1
        p += 1
    return "".join(parts)


def dense_flat(lines: int = 10_000) -> str:
    """:func:`dense` without headings: only blank lines separate the paragraphs."""
    return dense(lines, headings=False)


def failing(lines: int = 10_000) -> str:
    """The book-like chapter with its claims of time 10x too large and its critical intensity doubled: ~400
    checks fail, as in a draft opened for the first time (each version publishes ~400 diagnostics)."""
    return book_like(lines).replace("= 240`", "= 480`").replace(" µs<!-- ≈ t_", "0 µs<!-- ≈ t_")


def unknown(lines: int = 10_000) -> str:
    """The book-like chapter with the name in each time claim misspelt: ~200 unknown names (N001), each with
    its did-you-mean note, as while an author renames a definition."""
    return book_like(lines).replace("<!-- ≈ t_", "<!-- ≈ tt_")


def huge(size: int = 20_000_000) -> str:
    """A book-like chapter of about ``size`` characters."""
    return book_like(max(10, size * 10_028 // 455_002))


ROOT = """\
# Shared figures

```calc
D = 8192
F = 4 * D
peak = tpu_v5e.flops_bf16
```

The shared model width is 8192<!-- = D -->.
"""
LEAF = """\
# Leaf {k}

```calc
import "root.md"
B = {b}
t = 2 * B * D * F FLOP / peak -> us
```

The matmul takes about {us} µs<!-- ≈ t --> at batch {b}.

{prose}
{prose}
{prose}
Typing goes here at the end of leaf {k}.
"""


def workspace(folder: Path, files: int = 200) -> list[Path]:
    """A root draft and ``files - 1`` leaves importing it, written to ``folder``: the paths, root first."""
    paths = [folder / "root.md"]
    paths[0].write_text(ROOT, "utf-8")
    for k in range(1, files):
        b = 64 * (k % 16 + 1)
        path = folder / f"leaf_{k:03}.md"
        path.write_text(LEAF.format(k=k, b=b, us=_us(b), prose=PROSE), "utf-8")
        paths.append(path)
    return paths


def chain(folder: Path, files: int = 200) -> list[Path]:
    """``files`` drafts, each importing the one before it: the paths, first (imported by all) first."""
    paths = []
    for k in range(files):
        path = folder / f"link_{k:03}.md"
        head = f'import "link_{k - 1:03}.md"\n' if k else ""
        previous = f"x_{k - 1} + 1" if k else "1"
        path.write_text(f"# Link {k}\n\n```calc\n{head}x_{k} = {previous}\n```\n\nIt is {k + 1}<!-- = x_{k} -->.\n")
        paths.append(path)
    return paths


SHAPES = {
    "book": book_like,
    "forward": forward,
    "giant": giant,
    "dense": dense,
    "dense_flat": dense_flat,
    "failing": failing,
    "unknown": unknown,
}

_DIGIT = re.compile(r"^(?:B_\d+|B) = \d+$|^Step \d+: `2 \* \d")
_TYPING = re.compile(r"^(?:The roofline model asks|# layer \d+|So a step is|Step \d+:|Typing goes here)")


@dataclass
class EditPlan:
    """Where a draft is edited: for each of top/middle/bottom, a digit's (line, column) and a typing (line, column)."""

    digits: dict[str, tuple[int, int]]
    typing: dict[str, tuple[int, int]]


def plan(text: str) -> EditPlan:
    """The digit and typing positions nearest the top, middle and bottom of ``text``."""
    rows = text.split("\n")
    digit_lines = [i for i, row in enumerate(rows) if _DIGIT.match(row)]
    typing_lines = [i for i, row in enumerate(rows) if _TYPING.match(row)]

    def nearest(candidates: list[int], fraction: float) -> int:
        target = fraction * len(rows)
        return min(candidates, key=lambda line: abs(line - target))

    digits, typing = {}, {}
    for where, fraction in WHERE.items():
        line = nearest(digit_lines, fraction)
        row = rows[line]
        column = len(row) - 1 if row[-1].isdigit() else row.index("`") + 1
        digits[where] = (line, column)
        line = nearest(typing_lines, fraction)
        typing[where] = (line, 4 if rows[line].startswith("The") else 2)
    return EditPlan(digits, typing)


if __name__ == "__main__":
    from scaling_core import analyze_document

    for name, make in SHAPES.items():
        draft = make()
        analysis = analyze_document(draft, f"{name}.md")
        failing = [c for c in analysis.checks if c.status != "pass"]
        errors = [d for d in analysis.diagnostics if d.severity <= 2]
        print(f"{name}: {draft.count(chr(10)):,} lines, {len(analysis.checks):,} checks, "
              f"{len(failing)} not passing, {len(errors)} errors/warnings, plan {plan(draft)}")  # fmt: skip
        for item in failing[:2] + errors[:2]:
            print("   ", item)
