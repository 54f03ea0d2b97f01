"""A calculator session: calc statements one at a time (``margin eval`` and the REPL)."""

from __future__ import annotations

from dataclasses import field

from scaling_core.config import Config
from scaling_core.diagnostics import Diagnostic, make_diagnostic
from scaling_core.document.derivation import explain
from scaling_core.document.interpret import Interpreter
from scaling_core.document.regions import CalcRegion
from scaling_core.document.results import Binding, CheckResult, ValueResult
from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_statements
from scaling_core.expr.values import EvaluationError, Limits
from scaling_core.hardware.records import hardware_records
from scaling_core.records import record
from scaling_core.text import Span
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.registry import default_registry


@record
class Evaluation:
    """The outcome of one line: its value (if any), check verdicts and diagnostics."""

    text: str
    value: ValueResult | None
    checks: list[CheckResult]
    diagnostics: list[Diagnostic] = field(default_factory=list)


@record
class Explanation:
    """A line's evaluation and its derivation in Markdown."""

    evaluation: Evaluation
    markdown: str


class CalcSession:
    """Keeps definitions between lines, like a REPL."""

    def __init__(self, config: Config | None = None) -> None:
        config = config or Config()
        self._interpreter = Interpreter(
            default_registry(), "", hardware_records(config), "<eval>", config.tolerance,
            Limits(max_array_elements=config.max_array_elements), self._no_imports,
        )  # fmt: skip

    @staticmethod
    def _no_imports(statement: ast.Import) -> dict[str, Binding]:
        raise EvaluationError(make_diagnostic("N006", "imports are not available in eval", statement.path_span))

    def run(self, text: str) -> Evaluation:
        """Evaluate one or more statements; spans are offsets into ``text``."""
        interpreter = self._interpreter
        interpreter.text = text
        lines, offset = [], 0
        for line in text.split("\n"):
            lines.append((offset, line))
            offset += len(line) + 1
        with quiet_arrays():
            effects = interpreter.evaluate(CalcRegion(Span(0, len(text)), tuple(lines), True, -1), interpreter.scope)
        interpreter.apply(effects, 0, replayed=False)
        values, checks = effects.values, list(effects.checks)
        last = values[-1] if values else None
        if last is not None and checks and checks[-1].span.start > last.span.start:
            last = None
        return Evaluation(text, last, checks, list(effects.diagnostics))

    def explain(self, text: str) -> Explanation:
        """Evaluate ``text`` and derive its last value: formulas, inputs, sources, definitions."""
        lines = text.split("\n")
        if len(lines) > 1:
            self.run("\n".join(lines[:-1]))
        last = lines[-1]
        interpreter = self._interpreter
        interpreter.evaluator.trace = []
        try:
            evaluation = self.run(last)
            calls = list(interpreter.evaluator.trace)
        finally:
            interpreter.evaluator.trace = None
        tokens, _problems = tokenize(last)
        statements, _problems = parse_statements(tokens, interpreter.is_unit)
        statement = statements[-1] if statements else None
        if evaluation.value is None or not isinstance(statement, (ast.Show, ast.Definition)):
            return Explanation(evaluation, "")
        value = interpreter.scope.lookup(statement.name) if isinstance(statement, ast.Definition) else None
        if value is None:
            value = evaluation.value.quantity or interpreter.evaluator.value(statement.expr)
        markdown = explain(
            last,
            last,
            statement.expr,
            value,
            calls,
            self._binding,
            interpreter.records,
            lambda _b: "defined earlier in this session",
        )
        return Explanation(evaluation, markdown)

    def _binding(self, name: str) -> Binding | None:
        interpreter = self._interpreter
        return interpreter.scope.top_level.get(name)
