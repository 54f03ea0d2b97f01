"""``analyze_document``: the one query behind ``margin check`` and the server.

Text in, :class:`DocumentAnalysis` out; deterministic; never raises on user
input.  Files are reached only through the ``loader`` the caller passes in
(for ``import "other.md"``), so the core itself does no I/O.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from scaling_core.config import Config
from scaling_core.diagnostics import CODES, Diagnostic, Related, Severity, make_diagnostic
from scaling_core.document.extract import extract
from scaling_core.document.incremental import RegionCache
from scaling_core.document.interpret import Interpreter
from scaling_core.document.regions import CalcRegion, ClaimRegion, CodeSpanRegion, ProblemRegion, Suppression
from scaling_core.document.results import Binding, CheckResult, DocumentAnalysis, ProblemResult
from scaling_core.expr import syntax as ast
from scaling_core.expr.evaluator import EvaluationError, Limits
from scaling_core.hardware.records import hardware_records
from scaling_core.text import LineIndex, Span
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.registry import default_registry

#: Resolves ``import "target"`` from the importing path: (resolved path, text) or None.
SourceLoader = Callable[[str, str], "tuple[str, str] | None"]

#: ``cancelled`` is polled every this many regions (a poll costs ~0.1 µs, a replayed region ~14 µs).
STOP_POLL_REGIONS = 64
_CALC_IGNORE = re.compile(r"#\s*margin\s*:\s*ignore\b\s*([\w\s,]*)")


class AnalysisCancelled(Exception):
    """Raised by ``analyze_document`` when its ``cancelled`` callback says the result is no longer wanted."""


@dataclass
class ImportContext:
    """Shared across one analysis and the analyses of what it imports."""

    loader: SourceLoader | None = None
    cache: dict[str, DocumentAnalysis] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)


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
    text: str, path: str, config: Config, context: ImportContext, cache: RegionCache | None, index: LineIndex | None,
    check_stop: Callable[[], None] | None,
) -> DocumentAnalysis:
    index = index or LineIndex(text)
    found = extract(text, index, cache.chunks if cache is not None else None, check_stop)
    result = DocumentAnalysis(path, text, index)

    def import_names(statement: ast.Import) -> dict[str, Binding]:
        return _import(statement, path, config, context)

    interpreter = Interpreter(
        default_registry(), text, hardware_records(config), path, config.tolerance,
        Limits(max_array_elements=config.max_array_elements), import_names, cache=cache,
    )  # fmt: skip
    try:
        with quiet_arrays():
            _interpret(found.regions, found.problems, interpreter, config, check_stop)
    except BaseException:
        interpreter.release()
        raise

    diagnostics = found.diagnostics + interpreter.diagnostics
    for block in found.python_blocks:
        why = "the workspace is not trusted (set trust = true)" if not config.trust else "running trusted Python is not available in this version"
        diagnostics.append(make_diagnostic("T001", f"python calc block not run: {why}", block.info_span))
    suppressions = found.suppressions + _calc_suppressions(found.regions, index)
    diagnostics = _suppress(diagnostics, suppressions)
    interpreter.checks = sorted((_unless_suppressed(c, suppressions, config) for c in interpreter.checks), key=_start)
    errors = sorted((d for d in diagnostics if d.severity is Severity.ERROR), key=_start)
    problems = found.problems
    result.problems = [_verdict(p, interpreter, errors) for p in problems]
    verdicts = [_problem_diagnostic(p, r, interpreter, errors) for p, r in zip(problems, result.problems) if r.status != "pass"]
    diagnostics += _suppress(verdicts, suppressions) + _unknown_codes(suppressions)
    result.diagnostics = _apply_settings(diagnostics, config)
    result.values, result.checks, result.bindings = interpreter.values, interpreter.checks, interpreter.bindings
    result.exports = dict(interpreter.top)
    result.records = interpreter.records
    result.references = interpreter.references
    interpreter.release()
    return result


def _interpret(
    regions: list, problems: list[ProblemRegion], interpreter: Interpreter, config: Config, check_stop: Callable[[], None] | None
) -> None:
    """Evaluate every region in document order, entering and leaving problem scopes."""
    upcoming = 0
    current: ProblemRegion | None = None
    for number, region in enumerate(regions):
        if check_stop is not None and not number % STOP_POLL_REGIONS:
            check_stop()
        start = region.number_span.start if isinstance(region, ClaimRegion) else region.span.start
        if current is not None and start >= current.span.end:
            current, interpreter.local, interpreter.problem = None, None, None
        while upcoming < len(problems) and problems[upcoming].span.start <= start:
            if start < problems[upcoming].span.end:
                current = problems[upcoming]
                interpreter.local, interpreter.problem = {}, current.ident
            upcoming += 1
        if isinstance(region, CalcRegion):
            interpreter.region("calc", region.span.start, region.span.end, partial(interpreter.calc_region, region))
        elif isinstance(region, CodeSpanRegion):
            if config.code_spans or region.role:
                interpreter.region("code", region.span.start, region.span.end, partial(interpreter.code_span, region))
        else:
            end = region.marker_span.end
            interpreter.region("claim", region.number_span.start, end, partial(interpreter.claim, region))


def _import(statement: ast.Import, path: str, config: Config, context: ImportContext) -> dict[str, Binding]:
    loaded = context.loader(path, statement.path) if context.loader else None
    if loaded is None:
        message = f"cannot import '{statement.path}': no such file in the workspace"
        raise EvaluationError(make_diagnostic("N006", message, statement.path_span))
    target, text = loaded
    if target in context.stack:
        chain = " -> ".join([*context.stack[context.stack.index(target):], target])
        raise EvaluationError(make_diagnostic("N007", f"import cycle: {chain}", statement.path_span))
    if target not in context.cache:
        context.cache[target] = analyze_document(text, target, config, context.loader, context)
    imported = context.cache[target]
    for cycle in (d for d in imported.diagnostics if d.code == "N007"):
        raise EvaluationError(make_diagnostic("N007", cycle.message, statement.path_span))
    return imported.exports


def _verdict(problem: ProblemRegion, interpreter: Interpreter, errors: list[Diagnostic]) -> ProblemResult:
    inside = problem.span.start, problem.span.end
    checks = _within(interpreter.checks, inside)
    failed = sum(c.status == "fail" for c in checks)
    failing = _within(errors, inside)
    status = "untested" if not checks and not failing else ("fail" if failed or failing else "pass")
    passed = sum(c.status in ("pass", "warn") for c in checks)
    return ProblemResult(problem.ident, problem.title, problem.span, problem.title_span, status, passed, failed, len(checks))


def _within(items: list, bounds: tuple[int, int]) -> list:
    """Items (sorted by span start) whose span starts inside ``bounds``."""
    low = bisect.bisect_left(items, bounds[0], key=_start)
    return items[low : bisect.bisect_left(items, bounds[1], lo=low, key=_start)]


def _start(item: Diagnostic | CheckResult) -> int:
    return item.span.start


def _problem_diagnostic(
    problem: ProblemRegion, verdict: ProblemResult, interpreter: Interpreter, errors: list[Diagnostic]
) -> Diagnostic:
    if verdict.status == "untested":
        return make_diagnostic("P002", f"{problem.ident} has no checks: add a calc check or a claim to its answer", problem.title_span)
    inside = problem.span.start, problem.span.end
    related = tuple(Related(c.span, c.message) for c in _within(interpreter.checks, inside) if c.status in ("fail", "skip"))
    related = related or tuple(Related(d.span, d.message) for d in _within(errors, inside))
    summary = f"{verdict.failed} of {verdict.total} checks fail" if verdict.total else "its calculations have errors"
    return make_diagnostic("P001", f"{problem.ident} fails: {summary}", problem.title_span, related=related)


def _calc_suppressions(regions: list, index: LineIndex) -> list[Suppression]:
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
    code = "U005" if check.status == "warn" else "C001"
    if check.status not in ("fail", "warn"):
        return check
    if _hidden(check.span, code, suppressions):
        return replace(check, status="skip", text=f"suppressed: {check.message}")
    if code in config.severity and config.severity[code] is None:
        return replace(check, status="skip", text=f"{code} turned off: {check.message}")
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
