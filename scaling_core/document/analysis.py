"""``analyze_document``: the one query behind ``margin check`` and the server.

Text in, :class:`DocumentAnalysis` out; deterministic; never raises on user
input.  Files are reached only through the ``loader`` the caller passes in
(for ``import "other.md"``), so the core itself does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from scaling_core.config import Config
from scaling_core.diagnostics import CODES, Diagnostic, Severity, make_diagnostic
from scaling_core.document.cells import python_cells
from scaling_core.document.effects import Effects, region_bounds
from scaling_core.document.extract import extract
from scaling_core.document.forward import ForwardReferences, looks_below, waits
from scaling_core.document.incremental import RegionCache, region_key
from scaling_core.document.interpret import Interpreter
from scaling_core.document.names import locate_unknown_names
from scaling_core.document.regions import (
    CalcRegion,
    ClaimRegion,
    CodeSpanRegion,
    MathRegion,
    ProblemRegion,
    Region,
    Suppression,
)
from scaling_core.document.results import Binding, CheckResult, CheckStatus, DocumentAnalysis, ProblemStatus
from scaling_core.document.verdicts import problem_diagnostic, problem_verdict, span_start
from scaling_core.expr import syntax as ast
from scaling_core.expr.values import EvaluationError, Limits
from scaling_core.external import TrustedCode
from scaling_core.hardware.records import hardware_records
from scaling_core.prelude import caller
from scaling_core.text import LineIndex, Span, holding
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.registry import default_registry

#: Resolves ``import "target"`` from the importing path: (resolved path, text) or None.
SourceLoader = Callable[[str, str], "tuple[str, str] | None"]

#: ``cancelled`` is polled every this many regions (a poll costs ~0.1 µs, a replayed region ~14 µs).
STOP_POLL_REGIONS = 64
_CALC_IGNORE = re.compile(r"#\s*margin\s*:\s*ignore\b\s*([\w\s,]*)")
#: The statuses whose diagnostic a suppression can hide (the check then counts as skipped).
_FAILING = frozenset((CheckStatus.FAIL, CheckStatus.WARN))


class AnalysisCancelled(Exception):
    """Raised by ``analyze_document`` when its ``cancelled`` callback says the result is no longer wanted."""


@dataclass
class ImportContext:
    """Shared across one analysis and the analyses of what it imports."""

    loader: SourceLoader | None = None
    cache: dict[str, DocumentAnalysis] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)
    #: Runs ```` ```python calc ```` blocks elsewhere when ``config.trust`` (None: they are not run).
    trusted: TrustedCode | None = None


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
    if cache is not None:
        cache.begin(config)
    check_stop = None if cancelled is None else partial(_check_stop, cancelled)
    try:
        known = index if index is not None and index.text is text else None
        result = _analyze(text, path, config, context, cache, known, check_stop)
    except BaseException:
        if cache is not None:
            cache.abandon()
        raise
    finally:
        context.stack.pop()
    if cache is not None:
        cache.end()
    return result


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
    found = extract(text, index, cache.chunks if cache is not None else None, check_stop)
    result = DocumentAnalysis(path, text, index)

    def import_names(statement: ast.Import) -> dict[str, Binding]:
        return _import(statement, path, config, context)

    interpreter = Interpreter(
        default_registry(), text, hardware_records(config), path, config.tolerance,
        Limits(max_array_elements=config.max_array_elements), import_names, stamp_bindings=cache is not None,
    )  # fmt: skip
    cells = python_cells(found.python_blocks, text, path, config, context.trusted if config.trust else None)
    if cells.bindings:  # python functions: top-level names of the whole draft
        interpreter.apply(Effects(0, (), (), (), cells.bindings, ()), 0, replayed=False)
    interpreter.evaluator.call = caller(context.trusted if config.trust else None)
    try:
        with quiet_arrays():
            _interpret(found.regions, found.problems, interpreter, config, cache, check_stop)
    except BaseException:
        interpreter.release()
        raise

    results = interpreter.results
    diagnostics = found.diagnostics + locate_unknown_names(
        results.diagnostics, results.bindings, found.problems, found.regions, index, path
    )
    diagnostics += cells.diagnostics
    suppressions = found.suppressions + _calc_suppressions(found.regions, index)
    diagnostics = _suppress(diagnostics, suppressions)
    checks = sorted((_unless_suppressed(c, suppressions, config) for c in results.checks), key=span_start)
    errors = sorted((d for d in diagnostics if d.severity is Severity.ERROR), key=span_start)
    problems = found.problems
    result.problems = [problem_verdict(p, checks, errors) for p in problems]
    verdicts = [problem_diagnostic(p, r, checks, errors)
                for p, r in zip(problems, result.problems) if r.status != ProblemStatus.PASS]  # fmt: skip
    diagnostics += _suppress(verdicts, suppressions) + _unknown_codes(suppressions)
    result.diagnostics = _apply_settings(diagnostics, config)
    result.values, result.checks, result.bindings = results.values, checks, results.bindings
    result.exports = dict(interpreter.scope.top_level)
    result.records = interpreter.records
    result.references = results.references
    result.imports = results.imports
    interpreter.release()
    return result


def _interpret(
    regions: list[Region],
    problems: list[ProblemRegion],
    interpreter: Interpreter,
    config: Config,
    cache: RegionCache | None,
    check_stop: Callable[[], None] | None,
) -> None:
    """Evaluate every region in document order, entering and leaving problem scopes.

    A region the cache knows (same text, same problem, same values of the
    names it mentions) is not evaluated: its recorded effects are applied
    again where it now starts.  A claim or inline value naming something not
    defined above it waits for the end of its scope (``forward.py``).
    """
    scope, text = interpreter.scope, interpreter.text
    forward = ForwardReferences(interpreter, cache)
    current: ProblemRegion | None = None
    for number, region in enumerate(regions):
        if check_stop is not None and not number % STOP_POLL_REGIONS:
            check_stop()
        start = region.number_span.start if isinstance(region, ClaimRegion) else region.span.start
        inside = holding(problems, start) if problems else None
        if inside is not current:
            if current is not None:
                forward.leave_problem()
            current = inside
            scope.enter(inside.ident if inside is not None else None)
        if isinstance(region, CodeSpanRegion) and not (config.code_spans or region.role):
            continue
        if isinstance(region, MathRegion) and not config.latex_math:
            continue
        key, quiet = None, looks_below(region)  # a claim's unknown name may be defined below: no did-you-mean yet
        if cache is None:
            effects, delta, replayed = interpreter.evaluate(region, scope, quiet=quiet), 0, False
        else:
            key = region_key(region, text[start : region_bounds(region)[1]], scope)
            if quiet and cache.waiting(key):
                forward.defer(region, key, scope)
                continue
            found = cache.get(key)
            if found is not None:
                effects, delta, replayed = found, start - found.start, True
            else:
                effects, delta, replayed = interpreter.evaluate(region, scope, quiet=quiet), 0, False
                cache.put(key, effects)
        if quiet and not replayed and waits(effects):
            if cache is not None and key is not None:
                cache.mark_waiting(key)
            forward.defer(region, key, scope)
            continue
        bindings = interpreter.apply(effects, delta, replayed=replayed)
        if bindings:
            forward.defined(bindings, current is not None)
    forward.finish()


def _import(statement: ast.Import, path: str, config: Config, context: ImportContext) -> dict[str, Binding]:
    loaded = context.loader(path, statement.path) if context.loader else None
    if loaded is None:
        message = f"cannot import '{statement.path}': no such file in the workspace"
        raise EvaluationError(make_diagnostic("N006", message, statement.path_span))
    target, text = loaded
    if target in context.stack:
        chain = " -> ".join([*context.stack[context.stack.index(target) :], target])
        raise EvaluationError(make_diagnostic("N007", f"import cycle: {chain}", statement.path_span))
    if target not in context.cache:
        context.cache[target] = analyze_document(text, target, config, context.loader, context)
    imported = context.cache[target]
    for cycle in (d for d in imported.diagnostics if d.code == "N007"):
        raise EvaluationError(make_diagnostic("N007", cycle.message, statement.path_span))
    return imported.exports


def _calc_suppressions(regions: list[Region], index: LineIndex) -> list[Suppression]:
    found = []
    for region in regions:
        if not isinstance(region, CalcRegion):
            continue
        for offset, line in region.lines:
            if "margin" not in line:
                continue
            match = _CALC_IGNORE.search(line)
            if match:
                codes = frozenset(re.split(r"[\s,]+", match.group(1).strip())) - {""}
                span = Span(offset + match.start(), offset + len(line))
                found.append(Suppression(span, codes or None, offset, offset + len(line)))
    return found


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
