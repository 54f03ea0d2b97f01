"""```` ```python calc ```` blocks: their code, the functions they define, and whether they ran.

The blocks of a draft form one :class:`~scaling_core.external.Program`, run in
document order as one module, and only through the caller's
:class:`~scaling_core.external.TrustedCode` (never in this process).  Each
function a block defines at its top level becomes a name of the whole draft,
visible from every calc block (its value is a record of kind
``python function``), so ``xla_cost(f, bf16[B, D])`` can name it:

* the names are read from the code without running it (Python's own parser:
  ``def f``, and ``f = jax.jit(g)`` or ``f = lambda ...``), so a draft names
  the same things whether or not it is trusted, plus any other callable the
  run reports;
* a function whose block did not run carries the reason in its record
  (``unknown["call"]``): a call of it is an untested value (T003), never an error.

Diagnostics: T001 (warning) for a block that did not run, saying how to trust
the workspace when that is why; T002 (error) for a block whose code raised, at
the line of the last traceback frame in that block.
"""

from __future__ import annotations

from dataclasses import dataclass

from scaling_core.config import Config
from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.regions import PythonRegion
from scaling_core.document.results import Binding
from scaling_core.expr.values import Record
from scaling_core.external import CellReport, Outcome, Program, ProgramReport, TrustedCode
from scaling_core.records import record
from scaling_core.text import Span
from scaling_core.xla_calls import FUNCTION_KIND

#: What an untrusted workspace's T001 says to do.
HOW_TO_TRUST = (
    "the workspace is not trusted; to run it, set trust = true under [tool.margin] in pyproject.toml "
    "(or in margin.toml), or trust the folder in your editor"
)
NO_RUNNER = "this caller runs no trusted code (margin check and the language server do, in a trusted workspace)"


@record
class Cell:
    """One block's code and where each of its lines starts in the document."""

    region: PythonRegion
    source: str
    #: Document offset of each line of ``source`` (line 1 is the line after the opening fence).
    line_starts: tuple[int, ...]

    def line_span(self, line: int) -> Span:
        """The span of the cell's 1-based ``line`` in the document (the opening fence if out of range)."""
        if not 1 <= line <= len(self.line_starts):
            return self.region.info_span
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else self.region.span.end
        return Span(start, max(start, end))


@dataclass
class PythonCells:
    """What the blocks of one draft add to its analysis."""

    diagnostics: list[Diagnostic]
    #: One top-level definition per function (the records described in the module docstring).
    bindings: tuple[Binding, ...]


def read_cells(blocks: list[PythonRegion], text: str) -> list[Cell]:
    """Each block's code without its fences (and without the indentation of its opening fence)."""
    cells = []
    for block in blocks:
        chunk = text[block.span.start : block.span.end]
        lines = chunk.splitlines(keepends=True)
        opening = lines[0] if lines else ""
        prefix = len(opening) - len(opening.lstrip(" >\t"))
        body = lines[1:]
        if body and _is_closing_fence(body[-1], opening.lstrip(" >\t")):
            body = body[:-1]
        offset = block.span.start + len(opening)
        code, starts = [], []
        for line in body:
            strip = min(prefix, len(line) - len(line.lstrip(" >\t")))
            starts.append(offset + strip)
            code.append(line[strip:].rstrip("\r\n") + "\n")
            offset += len(line)
        cells.append(Cell(block, "".join(code), tuple(starts)))
    return cells


def _is_closing_fence(line: str, opening: str) -> bool:
    fence = opening[:1]
    stripped = line.strip(" >\t\r\n")
    return bool(fence) and fence in "`~" and len(stripped) >= 3 and stripped == fence * len(stripped)


def declared_functions(source: str) -> list[tuple[str, int, int]]:
    """Top-level functions the code declares, read without running it: (name, 1-based line, column).

    ``def f``, ``async def f``, and ``f = <a call or a lambda>`` (``jax.jit(g)``,
    ``partial(g, ...)``).  Code that does not parse declares nothing here (running it reports why).
    """
    import ast as pyast  # Python's own parser, only for drafts with python calc blocks (off the start-up path)
    import warnings

    try:
        with warnings.catch_warnings():  # `1if`, "\d": the parser's warnings would be noise on stderr
            warnings.simplefilter("ignore")
            module = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    for node in module.body:
        if isinstance(node, pyast.FunctionDef | pyast.AsyncFunctionDef):
            found.append((node.name, node.lineno, _name_column(source, node.name, node.lineno, node.col_offset)))
        elif isinstance(node, pyast.Assign) and isinstance(node.value, pyast.Call | pyast.Lambda):
            for target in node.targets:
                if isinstance(target, pyast.Name):
                    found.append((target.id, target.lineno, target.col_offset))
    return found


def _name_column(source: str, name: str, lineno: int, col_offset: int) -> int:
    """The column of a ``def``'s name (Python reports the column of ``def`` or of a decorator's line)."""
    lines = source.splitlines()
    line = lines[lineno - 1] if lineno - 1 < len(lines) else ""
    column = line.find(name, col_offset)
    return column if column >= 0 else col_offset


def python_cells(
    blocks: list[PythonRegion], text: str, path: str, config: Config, trusted: TrustedCode | None
) -> PythonCells:
    """Run (or not) a draft's python calc blocks; their diagnostics and the functions they define."""
    if not blocks:
        return PythonCells([], ())
    cells = read_cells(blocks, text)
    program = Program(tuple(cell.source for cell in cells))
    if not config.trust or trusted is None:
        why = HOW_TO_TRUST if not config.trust else NO_RUNNER
        report = ProgramReport(tuple(CellReport(Outcome.NOT_RUN, why) for _ in cells))
    else:
        report = _load(trusted, program, len(cells))
    diagnostics = [_diagnostic(cell, result) for cell, result in zip(cells, report.cells) if result.outcome != "ok"]
    return PythonCells(diagnostics, _bindings(cells, report, program.digest, path))


def _load(trusted: TrustedCode, program: Program, count: int) -> ProgramReport:
    try:
        report = trusted.load(program)
    except Exception as error:  # the runner is the caller's code: its failure is reported, never raised
        message = f"the analysis process failed: {type(error).__name__}: {error}"
        return ProgramReport(tuple(CellReport(Outcome.NOT_RUN, message) for _ in range(count)))
    if len(report.cells) != count:
        message = "the analysis process answered for a different number of blocks"
        return ProgramReport(tuple(CellReport(Outcome.NOT_RUN, message) for _ in range(count)))
    return report


def _diagnostic(cell: Cell, result: CellReport) -> Diagnostic:
    if result.outcome == Outcome.ERROR:
        span = cell.line_span(result.line) if result.line else cell.region.info_span
        return make_diagnostic("T002", f"python calc block raised {result.message}", span)
    return make_diagnostic("T001", f"python calc block not run: {result.message}", cell.region.info_span)


def _bindings(cells: list[Cell], report: ProgramReport, digest: str, path: str) -> tuple[Binding, ...]:
    found: dict[str, Binding] = {}
    for cell, result in zip(cells, report.cells):
        for name, line, column in declared_functions(cell.source):
            ran = result.outcome == Outcome.OK
            if ran and name not in report.functions:
                continue  # it ran, and the name is not a function after all (``mesh = jax.make_mesh(...)``)
            why = "" if ran else _why_not_callable(name, result)
            start = cell.line_span(line).start + column
            found[name] = _binding(name, digest, why, Span(start, start + len(name)), path)
    first = cells[0].region.info_span
    for name in sorted(report.functions - found.keys()):
        found[name] = _binding(name, digest, "", first, path)
    return tuple(found.values())


def _why_not_callable(name: str, result: CellReport) -> str:
    if result.outcome == Outcome.ERROR:
        return f"the python calc block defining {name} raised {result.message}"
    return f"the python calc block defining {name} was not run (see the T001 warning there)"


def _binding(name: str, digest: str, why: str, span: Span, path: str) -> Binding:
    record = Record(
        name, f"python function {name}", {}, {"program": digest}, kind=FUNCTION_KIND,
        unknown={"call": why} if why else {},
    )  # fmt: skip
    return Binding.at(name, record, span, path, False, f"python function {name}", (FUNCTION_KIND, name, digest, why))


__all__ = ["FUNCTION_KIND", "HOW_TO_TRUST", "Cell", "PythonCells", "declared_functions", "python_cells", "read_cells"]
