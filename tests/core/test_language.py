"""Lexer, parser and evaluator behaviour of the calc language."""

from __future__ import annotations

import pytest

from scaling_core.expr import syntax as ast
from scaling_core.expr.chain import parse_chain
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_statements
from scaling_core.expr.tokens import TokenKind
from scaling_core.units.registry import default_registry
from tests.conftest import codes, run, statuses

IS_UNIT = default_registry().__contains__


def parse(text: str) -> tuple[list[ast.Statement], list[str]]:
    tokens, lex_problems = tokenize(text)
    statements, problems = parse_statements(tokens, IS_UNIT)
    return statements, [d.code for d in lex_problems + problems]


def test_spans_are_code_point_offsets_with_a_base() -> None:
    tokens, _ = tokenize("µs × 2", base=10)
    assert [(t.kind, t.span.start, t.span.end) for t in tokens[:3]] == [
        (TokenKind.IDENT, 10, 12),
        (TokenKind.STAR, 13, 14),
        (TokenKind.NUMBER, 15, 16),
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [("2 × 3", 6), ("2 · 3", 6), ("6 ÷ 3", 2), ("2^10", 1024), ("2**10", 1024), ("10²", 100), ("−4 + 5", 1)],
)
def test_author_notation_for_operators(text: str, value: float) -> None:
    assert run(text).value.quantity.value == value  # type: ignore[union-attr]


def test_newlines_inside_brackets_continue_a_statement() -> None:
    result = run("B = [1,\n     8,\n     64]\nB")
    assert result.value.display == "[1, 8, 64]"  # type: ignore[union-attr]
    assert codes(result) == []


def test_one_bad_statement_does_not_hide_the_next() -> None:
    result = run("x = 3 +* 4\ny = 2\nz = (1\nw = y + 5\nw")
    assert codes(result) == ["S001", "S001"]
    assert result.value.display == "7"  # type: ignore[union-attr]


def test_assignment_to_an_expression_suggests_a_check() -> None:
    _, problems = parse("2 * x = 5")
    assert problems == ["S001"]


def test_unit_after_a_power_applies_to_the_whole_power() -> None:
    assert run("2**30 byte").value.display == "1.07 GB"  # type: ignore[union-attr]


def test_a_unit_continues_across_an_unspaced_slash_only() -> None:
    assert run("100 GB/s").value.display == "100 GB/s"  # type: ignore[union-attr]
    assert run("1e9 byte / s").value.display == "1 GB/s"  # type: ignore[union-attr]
    assert run("W = 45e9 byte/s\n9e10 byte / W").value.display == "2 s"  # type: ignore[union-attr]


def test_checks_and_relations() -> None:
    result = run("3 < 4\n3 ≤ 3\n4 > 5\n4 >= 4\n4 ≥ 5\n2 ~= 2.05\n2 == 2")
    assert statuses(result) == ["pass", "pass", "fail", "pass", "fail", "pass", "pass"]


def test_import_statement_parses_with_its_path_span() -> None:
    statements, problems = parse('import "other.md"')
    assert problems == []
    statement = statements[0]
    assert isinstance(statement, ast.Import) and statement.path == "other.md"
    assert (statement.path_span.start, statement.path_span.end) == (7, 17)


def test_code_span_chain_needs_a_relation() -> None:
    assert parse_chain(tokenize("2 * 3")[0], IS_UNIT) is None
    links = parse_chain(tokenize("2 * K = 2 * 8 = 16")[0], IS_UNIT)
    assert links is not None and [link.relation for link in links] == ["", "=", "="]


def test_shape_literals_have_bytes_and_size() -> None:
    assert run("bf16[8, 128, 8192].bytes").value.display == "16.8 MB"  # type: ignore[union-attr]
    assert run("int8[1024, 1024].bytes").value.display == "1.05 MB"  # type: ignore[union-attr]
    assert run("f32[4, 4].size").value.display == "16 element"  # type: ignore[union-attr]


def test_records_have_only_declared_fields() -> None:
    assert codes(run("h100.__class__")) == ["N003"]
    assert codes(run("h100")) == []
    assert codes(run("h100 + 1")) == ["U006"]


@pytest.mark.parametrize(
    ("text", "display"),
    [("ceil(2.1)", "3"), ("floor(2.9)", "2"), ("round(2.5)", "2"), ("sqrt(16)", "4"), ("log2(1024)", "10"),
     ("min(3, 1, 2)", "1"), ("max(1 s, 2 ms)", "1 s"), ("max([1, 5, 2])", "5"), ("sum([1, 2, 3])", "6"),
     ("range(4)", "[0, 1, 2, 3]"), ("abs(-3 s)", "3 s"), ("sqrt(16 s^2)", "4 s")],
)  # fmt: skip
def test_builtin_functions(text: str, display: str) -> None:
    assert run(text).value.display == display  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "code"),
    [("10**10**10", "E002"), ("1/0", "E001"), ("range(1e9)", "E003"), ("[1, 2] * [1, 2, 3]", "E005"),
     ("sqrt(-1)", "E004"), ("(-8)**0.5", "E004"), ("2 ** (1 s)", "U006"), ("1 s ** 200", "E003"),
     ("nope(1)", "N004"), ("sqrt()", "N005"), ("undefined_thing", "N001"), ("5 parsecs", "N002")],
)  # fmt: skip
def test_failures_are_diagnostics(text: str, code: str) -> None:
    assert codes(run(text)) == [code]


def test_deep_nesting_is_a_limit_not_a_crash() -> None:
    assert codes(run("(" * 500 + "1" + ")" * 500)) == ["E003"]
    assert codes(run("-" * 5000 + "1")) == ["E003"]


def test_names_resolve_in_document_order_and_shadow() -> None:
    result = run("x = 1\ny = x + 1\nx = 10\nx + y")
    assert result.value.display == "12"  # type: ignore[union-attr]
    assert codes(result) == ["N008"]


def test_bare_unit_names_work_but_single_letters_stay_variables() -> None:
    assert run("1e9 byte / ms").value.display == "1 TB/s"  # type: ignore[union-attr]
    assert codes(run("2 * B")) == ["N001"]
