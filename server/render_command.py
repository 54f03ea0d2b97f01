"""``margin render IN.md [-o OUT.md | --in-place]``: the draft with its inline values substituted.

What it writes, and how (docs/security.md, "What render writes"):

* only UTF-8 drafts: anything else is a usage error naming what the bytes
  look like (UTF-16, UTF-32, or the first byte that is not UTF-8), never a
  draft rewritten with replacement characters; a UTF-8 byte order mark and
  the line endings are kept, so bytes it does not change come out the same;
* never over its own input (the same file by any name, a link or a hard link
  included) unless ``--in-place`` says so;
* through :func:`server.workspace.write_atomically`: a new temporary file in
  the target's folder, then a rename; missing folders are created first.
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys
from pathlib import Path

from scaling_core import analyze_document
from scaling_core.render import substitute_inline_values
from server.workspace import UsageError, display_path, find_project, make_loader, write_atomically

#: Byte order marks of encodings Margin does not read; UTF-32 LE first (its mark starts with UTF-16 LE's).
_FOREIGN_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32 LE"), (codecs.BOM_UTF32_BE, "UTF-32 BE"),
    (codecs.BOM_UTF16_LE, "UTF-16 LE"), (codecs.BOM_UTF16_BE, "UTF-16 BE"),
)  # fmt: skip
_UTF8_MARK = "\ufeff"


def add_render_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """The ``render`` subcommand's options."""
    render = commands.add_parser("render", parents=[common], help="substitute {calc} inline values into a draft")
    render.add_argument("input", type=Path)
    render.add_argument("-o", "--output", type=Path, help="write here (atomically) instead of stdout")
    render.add_argument("--in-place", action="store_true", help="write the result over the input draft")
    render.add_argument("--config", type=Path)


def decode_draft(data: bytes, name: str) -> tuple[str, str]:
    """The text of a UTF-8 draft and its byte order mark ("" or U+FEFF); a usage error for anything else."""
    for foreign, encoding in _FOREIGN_MARKS:
        if data.startswith(foreign):
            raise UsageError(f"{name}: the draft is {encoding} (it starts with a byte order mark); "
                             "Margin reads UTF-8 only: convert it first")  # fmt: skip
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{name}: not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}; "
                         "Latin-1 or Windows-1252, perhaps); Margin reads UTF-8 only: convert it first") from None  # fmt: skip
    if len(text) >= 2 and text.count("\x00") * 4 >= len(text):
        raise UsageError(f"{name}: the draft looks like UTF-16 or UTF-32 without a byte order mark "
                         "(a quarter or more of it is NUL bytes); Margin reads UTF-8 only: convert it first")  # fmt: skip
    mark = _UTF8_MARK if text.startswith(_UTF8_MARK) else ""
    return text[len(mark) :], mark


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # the output does not exist yet
        return False


def run_render(args: argparse.Namespace) -> int:
    """``margin render IN.md [-o OUT.md | --in-place]``."""
    if not args.input.is_file():
        raise UsageError(f"{args.input}: no such file")
    target: Path | None = args.output
    if args.in_place:
        if target is not None and not _same_file(args.input, target):
            raise UsageError("--in-place writes over the input: it takes no -o elsewhere")
        target = args.input
    elif target is not None and _same_file(args.input, target):
        raise UsageError(f"{target}: is the input draft itself; render will not overwrite it (pass --in-place to)")
    try:
        data = args.input.read_bytes()
    except OSError as error:
        raise UsageError(f"{args.input}: cannot read: {error.strerror or error}") from None
    text, mark = decode_draft(data, str(args.input))
    project = find_project(args.input, args.config)
    analysis = analyze_document(text, display_path(args.input), project.config, make_loader(project))
    rendered = (mark + substitute_inline_values(analysis)).encode("utf-8")
    if target is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(rendered)
        return 0
    folder = target.parent
    if not folder.is_dir():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"{target}: cannot create the folder {folder}: {error.strerror or error}") from None
    try:
        write_atomically(target, rendered)
    except OSError as error:
        raise UsageError(f"{target}: cannot write: {error.strerror or error}") from None
    return 0
