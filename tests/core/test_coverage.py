"""Coverage: which concepts a draft introduces, and which problems test them (through the engine)."""

from __future__ import annotations

import pytest

from scaling_core import Config, DocumentAnalysis, ProblemStatus, analyze_document
from scaling_core.document.analysis import ImportContext
from scaling_core.queries.coverage import document_coverage, workspace_coverage
from scaling_core.queries.coverage_model import ConceptKind, ConceptStatus, FileCoverage
from scaling_core.text import Span


def _coverage(text: str) -> FileCoverage:
    return document_coverage(analyze_document(text, "x.md"))


def _status(coverage: FileCoverage) -> dict[str, str]:
    return {c.name: c.status for c in coverage.concepts if c.kind != ConceptKind.SECTION}


BASE = """# Matmul

```calc
D = 8192
F = 4 * D
flops = 2 * D * F
unused = 3
```

## Problems

"""


def test_a_concept_used_only_by_other_concepts_is_covered_through_the_graph() -> None:
    text = BASE + "**Question 1:** How many FLOPs?\n\n`flops / 2 = 268435456`\n"
    status = _status(_coverage(text))
    # The problem checks only `flops`; flops is built from F, and F from D.
    assert status == {"D": "tested", "F": "tested", "flops": "tested", "unused": "untested"}


def test_an_untested_definition_is_listed_with_its_line_and_lowers_the_percentage() -> None:
    coverage = _coverage(BASE + "**Question 1:** What is F?\n\n`F * 1 = 32768`\n")
    untested = [(c.name, c.line) for c in coverage.concepts if c.status == ConceptStatus.UNTESTED]
    assert untested == [("flops", 6), ("unused", 7)]
    # Concepts: 2 headings + 4 definitions; both sections are covered (a problem sits in each, nested).
    assert (coverage.covered, coverage.total) == (4, 6)
    assert round(coverage.percent, 1) == 66.7


def test_a_failing_check_covers_and_says_it_fails() -> None:
    coverage = _coverage(BASE + "**Question 1:** What is F?\n\n`F * 1 = 12345`\n")
    status = _status(coverage)
    assert status["F"] == "failing" and status["D"] == "failing"
    (problem,) = next(c for c in coverage.concepts if c.name == "F").problems
    assert problem.title == "Question 1" and problem.status == "fail"


def test_a_passing_check_outweighs_a_failing_one() -> None:
    text = BASE + "**Question 1:** F?\n\n`F * 1 = 12345`\n\n**Question 2:** D?\n\n`D * 1 = 8192`\n"
    status = _status(_coverage(text))
    assert status["D"] == "tested" and status["F"] == "failing"


def test_suppressed_checks_cover_nothing() -> None:
    failing_ignored = BASE + "**Question 1:** F?\n\n<!-- margin: ignore C001 -->\n`F * 1 = 12345`\n"
    assert _status(_coverage(failing_ignored))["F"] == "untested"
    passing_in_off_region = BASE + "**Question 1:** F?\n\n<!-- margin: off -->\n`F * 1 = 32768`\n<!-- margin: on -->\n"
    assert _status(_coverage(passing_in_off_region))["F"] == "untested"
    calc_ignore = BASE + "**Question 1:** F?\n\n```calc\nF == 32768  # margin: ignore\n```\n"
    assert _status(_coverage(calc_ignore))["F"] == "untested"
    other_code = BASE + "**Question 1:** F?\n\n<!-- margin: ignore U005 -->\n`F * 1 = 32768`\n"
    assert _status(_coverage(other_code))["F"] == "tested"


def test_checks_outside_problems_do_not_cover() -> None:
    assert _status(_coverage(BASE + "Prose: `F * 1 = 32768`.\n"))["F"] == "untested"


def test_a_tests_declaration_covers_names_and_what_they_are_built_from() -> None:
    text = BASE + "<!-- problem: p -->\n<!-- tests: flops, unused -->\nDerive it by hand.\n<!-- /problem -->\n"
    assert set(_status(_coverage(text)).values()) == {"tested"}


def test_a_tests_declaration_naming_nothing_is_a_note() -> None:
    text = BASE + "<!-- problem: p -->\n<!-- tests: flopz -->\n`F * 1 = 32768`\n<!-- /problem -->\n"
    coverage = _coverage(text)
    assert coverage.notes == ((13, "'flopz' in a tests: declaration names no definition, chip field or formula"),)


def test_chip_fields_and_formulas_used_in_prose_are_concepts() -> None:
    text = """# Roofline

```calc
t = 2 * 8192 * 8192 / h100.flops_bf16
r = roofline_time(1e12 FLOP, 1e9 byte, h100.flops_bf16, h100.hbm_bw)
```

The HBM moves 3.35 TB/s<!-- ≈ h100.hbm_bw -->.

## Problems

**Question 1:** How long?

`t * 1e6 ≈ 0.136 s`
"""
    coverage = _coverage(text)
    kinds = {c.name: (c.kind, c.status) for c in coverage.concepts}
    assert kinds["h100.flops_bf16"] == ("chip field", "tested")
    assert kinds["roofline_time()"] == ("formula", "untested")
    assert kinds["h100.hbm_bw"] == ("chip field", "untested")
    # The claim's target (line 8) uses the field too; the concept is listed at its first use.
    assert next(c.line for c in coverage.concepts if c.name == "h100.hbm_bw") == 5
    assert kinds["r"] == ("definition", "untested")


def test_chip_fields_used_only_inside_problems_are_not_concepts() -> None:
    text = "# A\n\n**Question 1:** x?\n\n```calc\nx = h100.hbm_bw * 1 s\nx ≈ 3.35 TB\n```\n"
    assert [c.kind for c in _coverage(text).concepts] == ["section"]


def test_sections_count_their_own_concepts_and_problems() -> None:
    text = "# Intro\n\nNo numbers here.\n\n# Model\n\n```calc\nL = 80\n```\n\n# Problems\n\n**Question 1:** L?\n\n`L * 1 = 80`\n"
    sections = _coverage(text).sections
    rows = [(s.title, s.covered, s.total, len(s.problems), s.checks) for s in sections]
    assert rows == [("Intro", 0, 1, 0, 0), ("Model", 2, 2, 0, 0), ("Problems", 1, 1, 1, 1)]
    assert sections[2].count(ProblemStatus.PASS) == 1


def _workspace(files: dict[str, str]) -> tuple[list[DocumentAnalysis], ImportContext]:
    def loader(importer: str, target: str) -> tuple[str, str] | None:
        return (target, files[target]) if target in files else None

    context = ImportContext(loader)
    analyses = [analyze_document(text, path, Config(), context=context) for path, text in files.items()]
    return analyses, context


A = "# Base\n\n```calc\nx = 3\ny = x * 2\nlonely = 1\n```\n"
B = '# Uses\n\n```calc\nimport "a.md"\nw = y * 2\n```\n\n<!-- problem: p -->\n`w + 0 = 12`\n<!-- /problem -->\n'


def test_problems_in_a_file_that_imports_this_one_cover_its_concepts() -> None:
    analyses, _context = _workspace({"a.md": A, "b.md": B})
    report = workspace_coverage(analyses)
    a, b = report.files
    assert _status(a) == {"x": "tested", "y": "tested", "lonely": "untested"}
    assert [p.path for p in next(c for c in a.concepts if c.name == "x").problems] == ["b.md"]
    # Imported definitions are concepts of the file that defines them, not of the importer.
    assert _status(b) == {"w": "tested"}


def test_a_file_reported_alone_is_covered_only_by_its_own_problems() -> None:
    analyses, _context = _workspace({"a.md": A, "b.md": B})
    assert set(_status(workspace_coverage(analyses[:1]).files[0]).values()) == {"untested"}


def test_imported_files_that_are_not_reported_still_link_the_graph() -> None:
    c = '# Top\n\n```calc\nimport "b.md"\n```\n\n<!-- problem: q -->\n`w * 1 = 12`\n<!-- /problem -->\n'
    analyses, context = _workspace({"a.md": A, "b.md": B, "c.md": c})
    a, c_analysis = analyses[0], analyses[2]
    # b.md is not reported, but c's problem reaches a's x through b's w.
    report = workspace_coverage([a, c_analysis], context=context.cache.values())
    assert _status(report.files[0])["x"] == "tested"
    assert {p.path for p in next(c for c in report.files[0].concepts if c.name == "x").problems} == {"b.md", "c.md"}


def test_totals_add_up_over_files() -> None:
    analyses, _context = _workspace({"a.md": A, "b.md": B})
    report = workspace_coverage(analyses)
    assert (report.covered, report.total) == (sum(f.covered for f in report.files), 6)


def test_a_chip_field_is_covered_only_through_the_file_that_uses_it() -> None:
    uses = "# Uses\n\n```calc\nbw = h100.hbm_bw * 1\n```\n\nThe HBM moves 3.35 TB/s<!-- ≈ h100.hbm_bw -->.\n"
    other = "# Other\n\n<!-- problem: p -->\n`h100.hbm_bw * 2 = 6.7 TB/s`\n<!-- /problem -->\n"
    analyses, _context = _workspace({"a.md": uses, "b.md": other})
    a, b = workspace_coverage(analyses).files
    # b's problem uses the same field, but tests nothing a.md says.
    assert _status(a) == {"bw": "untested", "h100.hbm_bw": "untested"}
    assert _status(b) == {}


def test_a_field_named_only_in_a_claim_is_a_concept_at_the_claim() -> None:
    coverage = _coverage("# A\n\nThe HBM moves 3.35 TB/s<!-- ≈ h100.hbm_bw -->.\n")
    (field,) = [c for c in coverage.concepts if c.kind == ConceptKind.FIELD]
    assert (field.name, field.line, field.status) == ("h100.hbm_bw", 3, "untested")


def test_a_slice_and_its_fields_are_concepts_covered_through_definitions() -> None:
    text = (
        '# Slice\n\n```calc\ns = tpu_v5p["4x4x4"]\nn = tpu_v5e["4x4"].chips\n```\n\n'
        "<!-- problem: p -->\n`s.chips * 1 = 64`\n`n + 0 = 16`\n<!-- /problem -->\n"
    )
    kinds = {c.name: (c.kind, c.status) for c in _coverage(text).concepts}
    assert kinds['tpu_v5p["4x4x4"]'] == ("slice", "tested")
    assert kinds['tpu_v5e["4x4"].chips'] == ("chip field", "tested")


def test_editor_views_lens_per_heading_untested_definitions_and_who_tests_a_name() -> None:
    from scaling_core.queries.coverage_views import heading_lenses, problems_testing, untested_definitions

    text = BASE + "**Question 1:** F?\n\n`F * 1 = 32768`\n\n`D * 2 = 16384`\n"
    coverage = _coverage(text)
    lenses = [(text[span.start : span.end], words) for span, words in heading_lenses(coverage)]
    # "# Matmul" spans its subsection: 1 problem, 2 checks, 4 of 6 concepts.
    assert lenses == [
        ("# Matmul", "1 problem · 2 checks · 67% of concepts tested"),
        ("## Problems", "1 problem · 2 checks · 100% of concepts tested"),
    ]
    assert [(text[s.start : s.end], words) for s, words in untested_definitions(coverage)] == [
        ("flops", "no problem tests `flops`"),
        ("unused", "no problem tests `unused`"),
    ]
    concept = problems_testing(coverage, text.index("F = 4"))
    assert concept is not None and [p.title for p in concept.problems] == ["Question 1"]


def _markdown_headings(text: str) -> list[tuple[int, int, str]]:
    """Each heading as CommonMark (markdown-it) reads it, past a YAML front matter: (line, level, title)."""
    import re

    from markdown_it import MarkdownIt

    front = re.match(r"---\n.*?\n---\n", text, re.S)  # front matter is no setext heading
    if front is not None:
        text = "\n" * front.group().count("\n") + text[front.end() :]
    tokens = MarkdownIt("commonmark").parse(text)
    return [
        (token.map[0] + 1, int(token.tag[1]), tokens[number + 1].content.strip())
        for number, token in enumerate(tokens)
        if token.type == "heading_open" and token.map is not None
    ]


def test_sections_are_the_headings_markdown_reads_in_real_drafts() -> None:
    from pathlib import Path

    root = Path(__file__).parents[2]
    drafts = sorted((root / "examples").glob("*.md")) + sorted((root / "tests" / "realistic").glob("*.md"))
    tricky = "# One #\n\n## Two ##  \n\nThree\n=====\n\n> ### Quoted\n\n- #### In a list\n\n```\n# not one\n```\n"
    texts = [path.read_text("utf-8") for path in drafts] + [tricky]
    for text in texts:
        coverage = document_coverage(analyze_document(text, "x.md"))
        found = [(s.line, s.level, s.title) for s in coverage.sections if s.level]
        assert found == _markdown_headings(text)


def test_coverage_reads_the_analysis_without_parsing_the_markdown_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_it import MarkdownIt

    text = BASE + "**Question 1:** F?\n\n<!-- margin: ignore C001 -->\n`F * 1 = 32768`\n\n`D * 2 = 16384`\n"
    analysis = analyze_document(text, "x.md")
    parses: list[str] = []
    original = MarkdownIt.parse

    def counted(self: MarkdownIt, src: str, env: object = None) -> object:
        parses.append(src)
        return original(self, src, env)  # type: ignore[arg-type]

    monkeypatch.setattr(MarkdownIt, "parse", counted)
    coverage = document_coverage(analysis)
    assert parses == []
    # The suppressed check covers nothing: only D, through the second check.
    assert _status(coverage) == {"D": "tested", "F": "untested", "flops": "untested", "unused": "untested"}
    assert [s.title for s in coverage.sections if s.level] == ["Matmul", "Problems"]


def test_a_section_spans_its_subsections_down_to_the_next_heading_at_its_level_or_above() -> None:
    from scaling_core.queries.coverage_views import heading_lenses

    text = (
        "# A\n\n```calc\na = 1\n```\n\n### A.1 (skips a level)\n\n**Question 1:** a?\n\n`a * 1 = 1`\n\n"
        "## A.2\n\n```calc\nb = 2\n```\n\n# B\n\n**Question 2:** b?\n\n`b * 1 = 2`\n\n## B.1\n\nProse.\n"
    )
    lenses = [(text[span.start : span.end], words) for span, words in heading_lenses(_coverage(text))]
    assert lenses == [
        ("# A", "1 problem · 1 check · 100% of concepts tested"),  # A, A.1 and A.2: a, b and the three headings
        ("### A.1 (skips a level)", "1 problem · 1 check · 100% of concepts tested"),
        ("## A.2", "0 problems · 0 checks · 100% of concepts tested"),  # b is tested by B's problem
        ("# B", "1 problem · 1 check · 50% of concepts tested"),  # B.1 has no problem and nothing tested
        ("## B.1", "0 problems · 0 checks · 0% of concepts tested"),
    ]


def test_one_definitions_coverage_is_what_the_whole_drafts_coverage_says_of_it() -> None:
    from pathlib import Path

    from scaling_core.queries.coverage import definition_coverage
    from scaling_core.queries.coverage_views import definition_concept

    root = Path(__file__).parents[2]
    drafts = sorted((root / "examples").rglob("*.md")) + sorted((root / "tests" / "realistic").glob("*.md"))
    texts = [path.read_text("utf-8") for path in drafts]
    texts.append(BASE + "**Question 1:** F?\n\n<!-- tests: unused -->\n`F * 1 = 32768`\n\n`D * 2 = 16385`\n")
    definitions = 0
    for text in texts:
        analysis = analyze_document(text, "x.md")
        whole = document_coverage(analysis)
        for start in sorted({b.span.start for b in analysis.bindings} | {0, len(text)}):
            assert definition_coverage(analysis, start) == definition_concept(whole, start), start
            definitions += definition_concept(whole, start) is not None
    assert definitions > 100


def test_coverage_a_slice_at_a_time_is_the_whole_coverage_or_stops_once_told(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.corpus import book_like
    from scaling_core.queries import coverage

    monkeypatch.setattr(coverage, "ITEMS_BETWEEN_QUESTIONS", 7)
    monkeypatch.setattr(coverage, "HEADINGS_BETWEEN_QUESTIONS", 2)
    text = book_like(300)
    analysis = analyze_document(text, "x.md")
    asked: list[int] = []
    whole = coverage.coverage_unless_stopped(analysis, lambda: asked.append(1) is None)
    assert whole == document_coverage(analyze_document(text, "x.md")) and whole is not None
    statuses = [c.status for c in whole.concepts]
    assert statuses.count(ConceptStatus.TESTED) >= 5 and statuses.count(ConceptStatus.UNTESTED) >= 5
    read = len(analysis.bindings) + len(analysis.values) + len(analysis.checks)
    sections = len(whole.sections)
    assert sections >= 6
    # asked again after every 7 definitions, values, checks or concepts read, and every 2 sections made
    assert len(asked) >= read / 7 + len(whole.concepts) / 7 + sections / 2
    for stop_at in (1, 2, 3, len(asked) // 2, *range(len(asked) - 4, len(asked) + 1)):
        fresh = analyze_document(text, "x.md")
        told: list[int] = []

        def go_on(told: list[int] = told, stop_at: int = stop_at) -> bool:
            told.append(1)
            return len(told) < stop_at  # the draft changes here

        assert coverage.coverage_unless_stopped(fresh, go_on) is None
        assert len(told) == stop_at  # never asked again once it said no


def test_only_spans_holding_a_chip_name_are_walked_for_chip_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    from scaling_core.queries.coverage_graph import FileGraph

    # Many checks, names and numbers alike; one claim reads a chip field, one value calls a formula.
    sections = "".join(f"## S{n}\n\n```calc\nx_{n} = {n} * 3\n```\n\nSo `x_{n} * 2 = {6 * n}` and `2 * 3 = 6`.\n\n"
                       for n in range(30))  # fmt: skip
    formula = "r = roofline_time(1e12 FLOP, 1e9 byte, h100.flops_bf16, h100.hbm_bw)"
    text = sections + f"It moves 3.35 TB/s<!-- ≈ h100.hbm_bw -->.\n\n```calc\n{formula}\n```\n"
    analysis = analyze_document(text, "x.md")
    walked: list[Span] = []
    inside = FileGraph._inside
    monkeypatch.setattr(FileGraph, "_inside", lambda self, span: walked.append(span) or inside(self, span))
    coverage = document_coverage(analysis)
    kinds = {c.name: c.kind for c in coverage.concepts}
    assert kinds["h100.hbm_bw"] == "chip field" and kinds["roofline_time()"] == "formula"
    assert kinds["h100.flops_bf16"] == "chip field"
    assert 0 < len(walked) <= 3  # the claim and the statement naming h100, not the ~90 other checks and values
