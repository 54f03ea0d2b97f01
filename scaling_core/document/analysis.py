"""``analyze_document``: the one query behind ``margin check`` and the server.

Text in, :class:`DocumentAnalysis` out; deterministic; never raises on user
input.  Files are reached only through the ``loader`` the caller passes in
(for ``import "other.md"``), so the core itself does no I/O.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from scaling_core.config import Config
from scaling_core.diagnostics import CODES, Diagnostic, Severity, make_diagnostic
from scaling_core.document.cells import python_cells
from scaling_core.document.driver import Driver
from scaling_core.document.effects import Effects, Results
from scaling_core.document.extract import extract
from scaling_core.document.import_context import (  # ImportContext and SourceLoader: re-exported for callers
    ImportContext as ImportContext,
)
from scaling_core.document.import_context import (
    SourceLoader as SourceLoader,
)
from scaling_core.document.import_context import (
    keep_import,
    load_import,
    share_analysis,
    shared_import,
)
from scaling_core.document.imports import imports_in
from scaling_core.document.incremental import RegionCache
from scaling_core.document.interpret import Interpreter, internal_error
from scaling_core.document.names import in_calc_block, locate_unknown_names, suggest_names
from scaling_core.document.regions import ChunkScan, Extraction, Region, Suppression
from scaling_core.document.results import Binding, CheckResult, CheckStatus, DocumentAnalysis, ProblemStatus
from scaling_core.document.shift import shift_regions
from scaling_core.document.sorted_on_read import SortedOnRead
from scaling_core.document.verdicts import problem_diagnostic, problem_verdict, span_start
from scaling_core.expr import syntax as ast
from scaling_core.expr.values import OUT_OF_TIME, Budget, EvaluationError, Limits
from scaling_core.hardware.records import hardware_records
from scaling_core.prelude import caller
from scaling_core.text import LineIndex, Span
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.registry import default_registry

#: Errors of an imported draft that its importer reports at the import too (besides a cycle, N007): out of time.
_PASSED_ON = (OUT_OF_TIME,)
#: The statuses whose diagnostic a suppression can hide (the check then counts as skipped).
_FAILING = frozenset((CheckStatus.FAIL, CheckStatus.WARN))


class AnalysisCancelled(Exception):
    """Raised by ``analyze_document`` when its ``cancelled`` callback says the result is no longer wanted."""


def analyze_document(
    text: str,
    path: str = "<draft>",
    config: Config | None = None,
    loader: SourceLoader | None = None,
    context: ImportContext | None = None,
    cache: RegionCache | None = None,
    index: LineIndex | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> DocumentAnalysis:
    """Analyse one Markdown draft: every calc statement, check, claim and problem.

    With a ``cache`` from the previous analysis of the same document, regions
    whose text and inputs are unchanged are reused; the result is identical.
    ``index`` may pass a :class:`LineIndex` of ``text`` the caller already has.
    ``cancelled`` is polled between chunks and regions (an editor's newer
    version makes this one moot); when it returns True the analysis stops with
    :class:`AnalysisCancelled`, keeping in ``cache`` what it already computed.
    """
    config = config or Config()
    context = context or ImportContext(loader)
    context.stack.append(path)
    owner = context.budget is None  # the analysis asked for, not one of what it imports: it sets the budget
    if owner:
        context.budget = Budget(_limits(config))
    if cache is not None:
        cache.begin(config)
    check_stop = None if cancelled is None else partial(_check_stop, cancelled)
    try:
        known = index if index is not None and index.text is text else None
        result = _analyze(text, path, config, context, cache, known, check_stop)
        if owner and context.share:
            share_analysis(result, text, config, context)
    except AnalysisCancelled:
        if cache is not None:
            cache.abandon()
        raise
    except Exception as error:  # noqa: BLE001 - a bug in Margin outside any statement: E999, never a crash
        if cache is not None:
            cache.abandon()
        result = DocumentAnalysis(path, text, LineIndex(text))
        result.diagnostics = [internal_error(error, Span(0, 0), "this document")]
        return result
    except BaseException:
        if cache is not None:
            cache.abandon()
        raise
    finally:
        context.stack.pop()
        if owner:
            context.budget = None
    if cache is not None:
        cache.end()
    return result


def _limits(config: Config) -> Limits:
    """The evaluation limits the settings give (``max_array_elements``, ``max_total_elements``, ``analysis_time_limit``)."""
    return Limits(config.max_array_elements, config.analysis_time_limit, config.max_total_elements)


def _check_stop(cancelled: Callable[[], bool]) -> None:
    if cancelled():
        raise AnalysisCancelled


def _analyze(
    text: str,
    path: str,
    config: Config,
    context: ImportContext,
    cache: RegionCache | None,
    index: LineIndex | None,
    check_stop: Callable[[], None] | None,
) -> DocumentAnalysis:
    index = index or LineIndex(text)
    chunk_cache = cache.chunks if cache is not None else None
    found = extract(text, index, chunk_cache, check_stop, latex_math=config.latex_math)
    result = DocumentAnalysis(path, text, index)

    def import_names(statement: ast.Import) -> dict[str, Binding]:
        return _import(statement, path, config, context)

    interpreter = Interpreter(
        default_registry(), text, hardware_records(config), path, config.tolerance,
        context.budget.limits if context.budget else _limits(config),
        import_names, stamp_bindings=cache is not None, budget=context.budget,
    )  # fmt: skip
    if cache is not None:
        cache.budget = interpreter.evaluator.budget
    cells = python_cells(found.python_blocks, text, path, config, context.trusted if config.trust else None)
    if cells.bindings:  # python functions: top-level names of the whole draft
        interpreter.apply(Effects(0, (), (), (), cells.bindings, ()), 0, replayed=False)
    interpreter.evaluator.call = caller(context.trusted if config.trust else None, context.measurements, path, text)
    try:
        with quiet_arrays():
            _interpret(found, interpreter, config, cache, check_stop)
    except BaseException:
        interpreter.release()
        raise

    results = interpreter.results
    unknown = suggest_names(results.diagnostics, interpreter.scope.top_level, results.bindings, found.problems,
                            interpreter.records, path)  # fmt: skip
    diagnostics = found.diagnostics + locate_unknown_names(
        unknown, results.bindings, found.problems, partial(_in_calc, found), index, path
    )
    diagnostics += cells.diagnostics
    suppressions = found.suppressions + found.calc_suppressions
    diagnostics = _suppress(diagnostics, suppressions)
    checks = _checks(results, suppressions, config)
    errors = sorted((d for d in diagnostics if d.severity is Severity.ERROR), key=span_start)
    problems = found.problems
    starts = [error.span.start for error in errors]
    result.problems = [problem_verdict(p, checks, starts) for p in problems]
    verdicts = [problem_diagnostic(p, r, checks, errors)
                for p, r in zip(problems, result.problems) if r.status != ProblemStatus.PASS]  # fmt: skip
    diagnostics += _suppress(verdicts, suppressions) + _unknown_codes(suppressions)
    result.diagnostics = _apply_settings(diagnostics, config)
    result.values, result.checks, result.bindings = results.values, checks, results.bindings
    result.exports = dict(interpreter.scope.top_level)
    result.records = interpreter.records
    result.references = results.references
    result.imports = results.imports
    result.headings = found.headings
    result.suppressions = [(s.start, s.end, s.codes) for s in suppressions]
    interpreter.release()
    return result


def _interpret(
    found: Extraction,
    interpreter: Interpreter,
    config: Config,
    cache: RegionCache | None,
    check_stop: Callable[[], None] | None,
) -> None:
    """Evaluate every region in document order (``driver.py``), replaying what the cache knows."""
    driver = Driver(interpreter, found.problems, config.code_spans, cache, check_stop)
    chunks = found.walked or found.chunks or [(0, ChunkScan(regions=found.regions))]
    driver.walk(chunks, cache.chunks.placed_regions if cache is not None else _placed)


def _in_calc(found: Extraction, offset: int) -> bool:
    """Whether ``offset`` is inside a calc block (looking only at the regions of its chunk)."""
    if not found.chunks:
        return in_calc_block(found.regions, offset)
    at = bisect.bisect_right(found.chunks, offset, key=_chunk_start) - 1
    return at >= 0 and in_calc_block(found.chunks[at][1].regions, offset, found.chunks[at][0])


def _chunk_start(chunk: tuple[int, ChunkScan]) -> int:
    return chunk[0]


def _placed(start: int, scan: ChunkScan) -> list[Region]:
    return shift_regions(scan, start)


def _import(statement: ast.Import, path: str, config: Config, context: ImportContext) -> dict[str, Binding]:
    loaded = load_import(context, path, statement.path)
    if loaded is None:
        context.edges.append((path, statement.path, "", ""))  # not found: a draft that reads it depends on that too
        message = f"cannot import '{statement.path}': no such file in the workspace"
        raise EvaluationError(make_diagnostic("N006", message, statement.path_span))
    target, text = loaded
    if target in context.stack:
        chain = " -> ".join([*context.stack[context.stack.index(target) :], target])
        raise EvaluationError(make_diagnostic("N007", f"import cycle: {chain}", statement.path_span))
    if target not in context.cache:
        _resolve(target, text, config, context)
    if target in context.reads:
        context.edges.append(context.reads[target])
    context.edges.append((path, statement.path, target, text))
    imported = context.cache[target]
    if context.budget is not None and context.budget.stopped:
        del context.cache[target]  # stopped part-way: not an analysis to reuse
    for failed in (d for d in imported.diagnostics if d.code == "N007" or d.message.startswith(_PASSED_ON)):
        raise EvaluationError(make_diagnostic(failed.code, failed.message, statement.path_span))
    return imported.exports


def _resolve(target: str, text: str, config: Config, context: ImportContext) -> None:
    """Analyse ``target`` into ``context.cache``, and first every draft it imports that is not there yet.

    Depth first with an explicit stack, so a chain of imports of any length
    costs no recursion: each draft is analysed after the drafts it imports,
    with ``context.stack`` the chain of importers that leads to it (as when
    its importer's analysis meets the import), so a cycle is still N007.
    """
    if shared_import(target, text, config, context):
        return
    base = len(context.stack)
    frames = [(target, text, iter(imports_in(text)))]
    context.stack.append(target)
    try:
        while frames:
            path, body, pending = frames[-1]
            written = next(pending, None)
            if written is not None:
                loaded = load_import(context, path, written)
                if loaded is not None and loaded[0] not in context.stack and loaded[0] not in context.cache:
                    if not shared_import(*loaded, config, context):
                        frames.append((*loaded, iter(imports_in(loaded[1]))))
                        context.stack.append(loaded[0])
                continue
            frames.pop()
            context.stack.pop()
            _analyze_import(path, body, config, context)
    finally:
        del context.stack[base:]


def _analyze_import(target: str, text: str, config: Config, context: ImportContext) -> None:
    """Analyse an imported draft (whose own imports are analysed already) into ``context.cache`` and the memo."""
    mark = len(context.edges)
    keep_import(target, text, config, context, analyze_document(text, target, config, context.loader, context), mark)


def _checks(results: Results, suppressions: list[Suppression], config: Config) -> Sequence[CheckResult]:
    """The checks in order of start, failing ones that are suppressed or turned off counting as skipped.

    Moved into place only when needed: a failing check to skip; problem
    verdicts read the checks inside each problem (``verdicts.within``, which
    moves only those).  Out of order (a claim that waited for names below),
    they are sorted when first read (problem verdicts read windows, which
    do not sort), or now when failing ones are to be skipped.
    """
    checks: Sequence[CheckResult] = results.checks
    failing = results.failing
    skipping = failing and (suppressions or any(level is None for level in config.severity.values()))
    if not results.checks_in_order:
        if not skipping:  # sorted when read: publishing reads none, problem verdicts read windows
            return SortedOnRead(checks, span_start)
        checks = sorted(checks, key=span_start)
        failing = [n for n, check in enumerate(checks) if check.status in _FAILING]
    if skipping:
        checks = list(checks)
        for n in failing:
            checks[n] = _unless_suppressed(checks[n], suppressions, config)
    return checks


def _hidden(span: Span, code: str, suppressions: list[Suppression]) -> bool:
    return any(s.start <= span.start <= s.end and (s.codes is None or code in s.codes) for s in suppressions)


def _unless_suppressed(check: CheckResult, suppressions: list[Suppression], config: Config) -> CheckResult:
    """A failing or warning check whose diagnostic is suppressed, or whose code is
    turned off (``severity``, ``--ignore``), counts as skipped."""
    if check.status not in _FAILING:
        return check
    code = "U005" if check.status == CheckStatus.WARN else "C001"
    if _hidden(check.span, code, suppressions):
        return replace(check, status=CheckStatus.SKIP, text=f"suppressed: {check.message}")
    if code in config.severity and config.severity[code] is None:
        return replace(check, status=CheckStatus.SKIP, text=f"{code} turned off: {check.message}")
    return check


def _unknown_codes(suppressions: list[Suppression]) -> list[Diagnostic]:
    return [
        make_diagnostic("M001", f"unknown diagnostic code '{code}' in a suppression comment", s.span)
        for s in suppressions for code in sorted(s.codes or ()) if code not in CODES
    ]  # fmt: skip


def _suppress(diagnostics: list[Diagnostic], suppressions: list[Suppression]) -> list[Diagnostic]:
    if not suppressions:
        return diagnostics
    return [d for d in diagnostics if d.code == "M001" or not _hidden(d.span, d.code, suppressions)]


def _apply_settings(diagnostics: list[Diagnostic], config: Config) -> list[Diagnostic]:
    adjusted = []
    for diagnostic in diagnostics:
        if diagnostic.code in config.severity:
            level = config.severity[diagnostic.code]
            if level is None:
                continue
            diagnostic = replace(diagnostic, severity=level)
        adjusted.append(diagnostic)
    adjusted.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return adjusted
