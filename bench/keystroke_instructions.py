"""Instructions the engine runs per keystroke on a 10,000-line draft shape, counted by valgrind.

A clock on a shared machine moves by 10-50% between runs, more than a change
worth making to one part of a keystroke (a few per cent).  The instructions
the interpreter runs do not move: the same draft and the same keystrokes give
the same count to a few thousandths (with ``PYTHONHASHSEED`` fixed).  This
runs the engine in-process (no language server) under valgrind's cachegrind
twice, typing ``--few`` and then ``--many`` characters in a line of the shape
(``bench/shapes.py``'s typing plan), and prints the difference per keystroke:
the set-up (generating the draft, its first analysis) cancels out.

    python bench/keystroke_instructions.py unknown book --where middle

Needs valgrind (``apt install valgrind``); ~30 s per shape on a 2-core machine.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = "the quick brown fox jumps over the lazy dog and more text here" * 3


def type_keystrokes(shape: str, where: str, count: int) -> None:
    """Open ``shape``, then type ``count`` characters at its typing position ``where``, each analysed."""
    sys.path.insert(0, str(ROOT))
    from bench import shapes
    from scaling_core import analyze_document
    from scaling_core.document.incremental import RegionCache

    text = shapes.SHAPES[shape]()
    rows, cache = text.split("\n"), RegionCache()
    analyze_document(text, cache=cache)
    line, column = shapes.plan(text).typing[where]
    gc.disable()  # a collection lands on different keystrokes from run to run
    for n in range(count):
        rows[line] = rows[line][: column + n] + TEXT[n] + rows[line][column + n :]
        analyze_document("\n".join(rows), cache=cache)


def instructions(shape: str, where: str, count: int) -> int:
    """Instructions of a whole run typing ``count`` characters (valgrind's ``I refs``)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, __file__, "--run", shape, where, str(count)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode or found is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("shapes", nargs="*", default=["book", "unknown", "failing", "forward"])
    parser.add_argument("--where", default="middle", choices=["top", "middle", "bottom"])
    parser.add_argument("--few", type=int, default=5)
    parser.add_argument("--many", type=int, default=25)
    parser.add_argument("--run", nargs=3, help=argparse.SUPPRESS)  # the typing itself, under valgrind
    args = parser.parse_args()
    if args.run:
        shape, where, count = args.run
        type_keystrokes(shape, where, int(count))
        return
    print(f"instructions per keystroke, typing at the {args.where} (valgrind, PYTHONHASHSEED=0)")
    for shape in args.shapes:
        few, many = instructions(shape, args.where, args.few), instructions(shape, args.where, args.many)
        print(f"  {shape:10s} {(many - few) / (args.many - args.few) / 1e6:8.1f} million")


if __name__ == "__main__":
    main()
