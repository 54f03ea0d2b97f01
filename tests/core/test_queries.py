"""Editor queries and the analysis facts they read: line starts, problem_at, imports, statuses."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from scaling_core import CheckKind, CheckStatus, ProblemStatus, Span, analyze_document
from scaling_core.document.incremental import RegionCache
from scaling_core.queries.actions import code_actions
from scaling_core.queries.assist import completions, signature_at
from scaling_core.queries.navigation import document_symbols
from scaling_core.text import LineIndex
from tests.conftest import analyze
from tests.core.test_problems_and_settings import BOOK_STYLE

CORE = Path(__file__).resolve().parents[2] / "scaling_core"


# -- start of the current line: the line index's rule (\n, \r\n, \r; not U+2028) ----------
def test_a_lone_cr_ends_the_line_a_query_looks_at() -> None:
    # LSP counts a lone "\r" as a line break, so the cursor's line starts after it.
    # Searching back for "\n" used to run on into the lines above: signature help
    # for the unclosed max( one line up, and units offered after "5\r" as if "5 x".
    text = "```calc\rB = 128\rt = max(B, 2\rc = 3\rx = 5\rx\r```\r"
    analysis = analyze(text)
    assert signature_at(analysis, text.index("c = ") + 4) is None
    items = completions(analysis, text.index("\rx\r") + 2)
    assert [(c.label, c.kind) for c in items] == [("x", "variable"), ("xla_cost", "function")]  # no units


def test_crlf_lines_are_queried_as_lf_lines() -> None:
    lf = "```calc\nB = 128\nt = max(B, 2)\n```\n"
    crlf = lf.replace("\n", "\r\n")
    for text in (lf, crlf):
        analysis = analyze(text)
        inside = text.index("max(B, ") + len("max(B, ")
        signature = signature_at(analysis, inside)
        assert signature is not None and signature.active == 1
        assert {c.label for c in completions(analysis, text.index("t = ") + 4)} >= {"B"}


def test_u2028_is_an_ordinary_character_for_queries() -> None:
    # U+2028 is not an LSP line break: a call opened before it is still open after it.
    text = "```calc\nB = 128\nt = max(B,\u2028 2)\n```\n"
    analysis = analyze(text)
    index = LineIndex(text)
    at = text.index(" 2)") + 1
    assert index.line_start_at(at) == text.index("t = ")
    signature = signature_at(analysis, at)
    assert signature is not None and signature.active == 1


def test_line_start_and_end_at_an_offset() -> None:
    text = "ab\r\ncd\ref\ngh"
    index = LineIndex(text)
    assert [index.line_start_at(text.index(c)) for c in "bdfh"] == [0, 4, 7, 10]
    assert [index.line_end_at(text.index(c)) for c in "adeg"] == [2, 6, 9, 12]


def test_claim_action_looks_only_at_the_cursors_line_with_cr_breaks() -> None:
    text = "```calc\nt = 12 days\n```\n\nIt takes 12 days.\rNext line.\r"
    analysis = analyze(text)
    at = text.index("12 days.")
    titles = [a.title for a in code_actions(analysis, at, at)]
    assert titles == ["Check 12 days against t"]


# -- which problem holds an offset ------------------------------------------------------------
def test_problem_at_answers_for_every_offset() -> None:
    analysis = analyze(BOOK_STYLE)
    first, second = analysis.problems
    assert analysis.problem_at(first.span.start) is first
    assert analysis.problem_at(BOOK_STYLE.index("B = 128")) is first
    assert analysis.problem_at(second.span.start) is second
    assert analysis.problem_at(second.span.end) is None  # half-open: the end is outside
    assert analysis.problem_at(0) is None
    assert analysis.problem_at(BOOK_STYLE.index("## Next")) is None


def test_symbols_and_scopes_use_problem_at() -> None:
    analysis = analyze(BOOK_STYLE)
    symbols = document_symbols(analysis)
    question = next(s for s in symbols if s.kind == "problem" and s.name.startswith("Question 1"))
    assert [c.name for c in question.children] == ["B", "t"]
    for binding in analysis.bindings:
        owner = analysis.problem_at(binding.span.start)
        assert owner is not None and owner.ident == "Question 1"


# -- imports ---------------------------------------------------------------------------------------
def _loader(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda importer, target: (target, files[target]) if target in files else None


def test_imports_lists_the_targets_of_import_statements() -> None:
    files = {"consts.md": "```calc\nN = 70e9\n```\n"}
    text = '```calc\nimport "consts.md"\nx = N * 2\n```\n\n```calc\nimport "missing.md"\n```\n'
    analysis = analyze_document(text, "d.md", loader=_loader(files))
    assert analysis.imports == ["consts.md", "missing.md"]
    assert [d.code for d in analysis.diagnostics] == ["N006"]
    assert analyze("The important thing: `2 * 3 = 6`.").imports == []


def test_only_real_imports_keep_a_region_from_being_reused() -> None:
    files = {"consts.md": "```calc\nN = 70e9\n```\n"}
    text = 'Not an import: `2 * 3 = 6 # import`.\n\n```calc\nimport "consts.md"\nx = N * 2\n```\n'
    cache = RegionCache()
    loader = _loader(files)
    analyze_document(text, "d.md", loader=loader, cache=cache)
    again = analyze_document(text, "d.md", loader=loader, cache=cache)
    assert cache.reused == 1  # the code span that says "import" is replayed; the import block is evaluated again
    files["consts.md"] = "```calc\nN = 1\n```\n"
    changed = analyze_document(text, "d.md", loader=_loader(files), cache=cache)
    assert [v.display for v in again.values] != [v.display for v in changed.values]


# -- statuses and kinds ----------------------------------------------------------------------
def test_statuses_and_kinds_are_strings_in_reports() -> None:
    analysis = analyze("```calc\nx = 2\nx == 3\n```\n\n**Question 1:** `2 * 3 = 6`.\n")
    check = analysis.checks[0]
    assert (check.kind, check.status) == (CheckKind.CALC, CheckStatus.FAIL) == ("calc", "fail")
    assert analysis.problems[0].status is ProblemStatus.PASS
    record = {"kind": check.kind, "status": check.status, "problem": analysis.problems[0].status}
    assert json.dumps(record) == '{"kind": "calc", "status": "fail", "problem": "pass"}'
    assert f"{check.kind} {check.status}" == "calc fail"


# -- module structure ---------------------------------------------------------------------------
def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def test_chunks_and_incremental_do_not_import_each_other() -> None:
    chunks = _imported_modules(CORE / "document" / "chunks.py")
    incremental = _imported_modules(CORE / "document" / "incremental.py")
    assert "scaling_core.document.incremental" not in chunks
    assert "scaling_core.document.chunks" not in incremental
    assert "scaling_core.document.shift" in incremental


def test_span_is_a_plain_pair() -> None:
    assert not hasattr(Span(1, 2), "shifted")  # moving spans is document/shift.py's
