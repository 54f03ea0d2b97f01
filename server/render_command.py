"""``margin render PATH… [-o OUT | --in-place] [--format markdown|json]``: drafts as published.

Each ``{calc}`` role is replaced by its value and each calc fence shows its
values as trailing comments (:mod:`scaling_core.publish`); a folder renders
into a build tree with the same layout (``-o _build/margin/``) or in place;
``--format json`` gives every value and verdict for the publishing plugins
(:mod:`server.publication`, docs/publishing.md).  Exit 1 names, on stderr,
each role or statement that could not be evaluated.

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
from dataclasses import dataclass
from pathlib import Path

from scaling_core import ImportContext, analyze_document
from server.collector import collector_held_for_analysis
from server.workspace import (
    Project,
    UsageError,
    discover,
    display_path,
    find_project,
    make_loader,
    write_atomically,
)

#: Byte order marks of encodings Margin does not read; UTF-32 LE first (its mark starts with UTF-16 LE's).
_FOREIGN_MARKS = (
    (codecs.BOM_UTF32_LE, "UTF-32 LE"), (codecs.BOM_UTF32_BE, "UTF-32 BE"),
    (codecs.BOM_UTF16_LE, "UTF-16 LE"), (codecs.BOM_UTF16_BE, "UTF-16 BE"),
)  # fmt: skip
_UTF8_MARK = "\ufeff"


def add_render_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """The ``render`` subcommand's options."""
    render = commands.add_parser(
        "render", parents=[common], help="publish drafts: {calc} values substituted, calc blocks annotated",
        description="Render drafts as published: each {calc} role replaced by its value, calc fences with their "
        "values as trailing comments; or (--format json) every value and verdict, for publishing plugins. "
        "Exit 0: everything evaluated; 1: a role or statement could not be evaluated (with --strict: or a check "
        "fails); 2: usage error or internal error.",
    )  # fmt: skip
    render.add_argument("inputs", nargs="+", type=Path, metavar="PATH", help="drafts or folders of drafts")
    render.add_argument("-o", "--output", type=Path,
                        help="write here (atomically): a file for one draft, a folder for a folder or several")  # fmt: skip
    render.add_argument("--in-place", action="store_true", help="write the results over the input drafts")
    render.add_argument("--format", choices=("markdown", "json"), default="markdown",
                        help="markdown (default): the drafts as published; json: every value and verdict")  # fmt: skip
    render.add_argument("--no-block-values", dest="block_values", action="store_false",
                        help="leave calc fences as written (no '# = value' comments)")  # fmt: skip
    render.add_argument("--strict", action="store_true", help="also exit 1 when a check or a problem fails")
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


@dataclass
class _Source:
    """One draft to render: its file, where it goes under an output folder, and its text."""

    file: Path
    relative: Path
    data: bytes = b""


def _sources(inputs: list[Path], project: Project, skip: Path | None) -> list[_Source]:
    """The drafts named (files as they are, folders walked as ``margin check`` walks them), each once."""
    found: list[_Source] = []
    for named in inputs:
        if named.is_dir():
            for file in discover([named], project):
                if skip is None or not _within(file.resolve(), skip):
                    found.append(_Source(file, file.relative_to(named)))
        elif named.is_file():
            found.append(_Source(named, Path(named.name)))
        else:
            raise UsageError(f"{named}: no such file or folder")
    unique = {str(source.file.resolve()): source for source in reversed(found)}
    sources = [source for source in found if unique[str(source.file.resolve())] is source]
    if not sources:
        raise UsageError("no Markdown files to render")
    return sources


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _targets(args: argparse.Namespace, sources: list[_Source], single: bool) -> list[Path | None]:
    """Where each rendered draft goes (None: standard output); refuses to write over an input by accident."""
    if args.format == "json":
        if args.in_place:
            raise UsageError("--in-place writes drafts: it takes no --format json")
        return [None] * len(sources)
    if args.in_place:
        if args.output is not None and not (single and _same_file(sources[0].file, args.output)):
            raise UsageError("--in-place writes over the input: it takes no -o elsewhere")
        return [source.file for source in sources]
    if args.output is None:
        if not single:
            raise UsageError("a folder or several drafts need -o FOLDER (a build tree) or --in-place")
        return [None]
    targets: list[Path | None] = [args.output] if single else [args.output / s.relative for s in sources]
    seen: set[str] = set()
    for target in targets:
        assert target is not None
        if any(_same_file(source.file, target) for source in sources):
            raise UsageError(f"{target}: is an input draft; render will not overwrite it (pass --in-place to)")
        if str(target) in seen:
            raise UsageError(f"{target}: two drafts would be written here; render their folders instead")
        seen.add(str(target))
    return targets


def _write(target: Path, data: bytes) -> None:
    folder = target.parent
    if not folder.is_dir():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"{target}: cannot create the folder {folder}: {error.strerror or error}") from None
    try:
        write_atomically(target, data)
    except OSError as error:
        raise UsageError(f"{target}: cannot write: {error.strerror or error}") from None


def run_render(args: argparse.Namespace) -> int:
    """``margin render PATH… [-o OUT | --in-place] [--format markdown|json]``."""
    # Here, not at the top: `margin check` imports this module for its options and needs none of these.
    from scaling_core.publish import render_markdown
    from server.analysis.runner import runner_for
    from server.publication import failed_lines, publication_records

    single = len(args.inputs) == 1 and args.inputs[0].is_file()
    skip = args.output.resolve() if args.output is not None and not single else None
    project = find_project(args.inputs[0] if args.inputs[0].exists() else Path.cwd(), args.config)
    sources = _sources(args.inputs, project, skip)
    targets = _targets(args, sources, single)
    context = ImportContext(make_loader(project), trusted=runner_for(project.root, project.config))
    analyses, failures = [], []
    for source in sources:
        try:
            source.data = source.file.read_bytes()
        except OSError as error:
            raise UsageError(f"{source.file}: cannot read: {error.strerror or error}") from None
        text, _mark = decode_draft(source.data, str(source.file))
        with collector_held_for_analysis():  # as `margin check` holds it (server/check_command.py)
            analyses.append(analyze_document(text, display_path(source.file), project.config, context=context))
        failures += failed_lines(analyses[-1], strict=args.strict)
    if args.format == "json":
        from server.escaping import json_text

        records = publication_records(analyses, [a.path for a in analyses], [str(s.file) for s in sources])
        output = json_text(records) + "\n"
        if args.output is not None:
            _write(args.output, output.encode("utf-8"))
        else:
            sys.stdout.write(output)
    else:
        for source, analysis, target in zip(sources, analyses, targets):
            mark = _UTF8_MARK if source.data.startswith(codecs.BOM_UTF8) else ""
            rendered = (mark + render_markdown(analysis, block_values=args.block_values)).encode("utf-8")
            if target is None:
                sys.stdout.flush()
                sys.stdout.buffer.write(rendered)
            elif not (args.in_place and rendered == source.data):  # an unchanged draft keeps its time stamp
                _write(target, rendered)
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0
