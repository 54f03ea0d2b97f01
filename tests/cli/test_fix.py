"""``margin check --fix`` / ``--diff``: safe quick fixes, verified, byte-exact (server/fixes.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

import server.fixes as fixes
from scaling_core import Config, DocumentAnalysis, analyze_document
from scaling_core.diagnostics import Fix
from scaling_core.text import LineIndex
from server.fixes import SAFE_CODES, fix_text, unified_diff
from tests.conftest import ROOT, margin

MISTAKES = ROOT / "examples" / "mistakes"
CALC = "```calc\nt = 22.49 days\nu = 7 s\nv = 1.5 s\n```\n\n"


def read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def fixable(analysis: DocumentAnalysis) -> list:
    return [d for d in analysis.diagnostics if d.fixes and d.code in SAFE_CODES]


def reconstruct(original: str, outcome: fixes.FixOutcome) -> str:
    """The original with exactly the reported replacements, placed by their reported positions."""
    index = LineIndex(original)
    edits = sorted((index.offset(f.line - 1, f.column - 1), f.old, f.new) for f in outcome.applied)
    out, position = [], 0
    for start, old, new in edits:
        assert original[start : start + len(old)] == old
        out += [original[position:start], new]
        position = start + len(old)
    return "".join(out) + original[position:]


def others(analysis: DocumentAnalysis, skip: set[str]) -> list[tuple]:
    """Diagnostics except the fixed ones, by what they say and the text they point at."""
    text = analysis.text
    return sorted(
        (d.code, d.severity, d.message, text[d.span.start : d.span.end])
        for d in analysis.diagnostics
        if not (d.code in SAFE_CODES and text[d.span.start : d.span.end] in skip)
    )


def assert_fixed(original: str, fixed: str, path: str) -> fixes.FixOutcome:
    """Every fixable error of ``original`` passes in ``fixed``, nothing else changed."""
    before = analyze_document(original, path, Config())
    outcome = fix_text(original, path, Config())
    assert fixed == outcome.text == reconstruct(original, outcome)
    assert len(outcome.applied) == len(fixable(before)) and not outcome.declined
    after = analyze_document(fixed, path, Config())
    assert not fixable(after)
    new_index = LineIndex(fixed)
    for applied in outcome.applied:
        (check,) = [c for c in after.checks if c.span.start == new_index.offset(applied.line - 1, applied.column - 1)]
        assert check.status == "pass" and fixed[check.span.start : check.span.end] == applied.new
    old_texts = {a.old for a in outcome.applied}
    now_passing = {fixed[p.title_span.start : p.title_span.end] for p in after.problems if p.status == "pass"}
    unchanged = [d for d in others(before, old_texts) if not (d[0] == "P001" and d[3] in now_passing)]
    assert others(after, set()) == unchanged
    assert [(c.kind, c.status) for c in after.checks if fixed[c.span.start : c.span.end] not in {
        a.new for a in outcome.applied}] == [(c.kind, c.status) for c in before.checks if original[
        c.span.start : c.span.end] not in old_texts]  # fmt: skip
    return outcome


def test_every_fixable_error_in_the_mistakes_becomes_a_pass() -> None:
    drafts = sorted(MISTAKES.rglob("*.md"))
    total = 0
    for draft in drafts:
        original = read(draft)
        outcome = fix_text(original, draft.name, Config())
        assert_fixed(original, outcome.text, draft.name)
        total += len(outcome.applied)
    assert total >= 2  # 12 days -> 22 days, 1.46e14 -> 5.28e17 FLOPs per dollar


def test_cli_fix_rewrites_only_changed_files(tmp_path: Path) -> None:
    folder = shutil.copytree(MISTAKES, tmp_path / "mistakes")
    (folder / "clean.md").write_bytes(b"# Clean\r\n\r\nNothing to check.  ")
    files = sorted(folder.rglob("*.md"))
    before = {f: f.read_bytes() for f in files}
    preview = margin("check", "--diff", ".", cwd=folder)
    assert {f: f.read_bytes() for f in files} == before, "--diff must not write"
    assert preview.returncode == 1 and "Would fix" in preview.stderr
    assert sorted(re.findall(r"^\+\+\+ b/(.*)$", preview.stdout, re.M)) == sorted(
        f.relative_to(folder).as_posix() for f in files if f.name != "clean.md"
    )
    fixed = margin("check", "--fix", "--exit-zero", ".", cwd=folder)
    count = len(files) - 1
    assert re.search(rf"Fixed ([2-9]|\d\d+) problems in {count} files?\n", fixed.stderr), fixed.stderr
    assert (folder / "clean.md").read_bytes() == before[folder / "clean.md"]
    for file in files:
        assert_fixed(before[file].decode("utf-8"), read(file), file.name)
    again = margin("check", "--fix", "--exit-zero", ".", cwd=folder)  # idempotent
    assert "Fixed 0 problems in 0 files" in again.stderr
    assert all(read(file).encode("utf-8") == file.read_bytes() for file in files)


def test_problem_answer_is_fixed_and_the_problem_passes() -> None:
    text = CALC + "**Question 1:** how long?\n\n<details>\nAbout 12 days<!-- ≈ t -->.\n</details>\n"
    outcome = assert_fixed(text, fix_text(text, "q.md", Config()).text, "q.md")
    assert "About 22 days<!-- ≈ t -->" in outcome.text
    assert [p.status for p in outcome.analysis.problems] == ["pass"]
    assert "P001" in [d.code for d in analyze_document(text, "q.md", Config()).diagnostics]


def test_a_fix_that_would_not_make_the_check_pass_is_not_offered() -> None:
    # 1.5 s in the author's style (whole seconds) is 2 s: outside ±1%; "7 s > 7 s" fails.
    # The engine offers only fixes that make the check pass; --fix re-checks them anyway
    # (the sabotaged test below covers that backstop).
    text = CALC + "It takes 7 s<!-- ≈ v ± 1% -->, over 5 s<!-- > u -->.\n"
    before = analyze_document(text, "d.md", Config())
    assert [d.code for d in before.diagnostics if d.code == "C001"] == ["C001", "C001"]
    assert [f.text for d in before.diagnostics for f in d.fixes] == []
    outcome = fix_text(text, "d.md", Config())
    assert outcome.text == text and not outcome.applied and not outcome.declined


def test_many_fixes_cost_a_few_analyses_not_one_each(monkeypatch) -> None:
    text = CALC + "".join(f"{i}: about 12 days<!-- ≈ t -->, 7 s<!-- ≈ v ± 1% -->.\n\n" for i in range(40))
    real, calls = fixes.analyze_document, []
    monkeypatch.setattr(fixes, "analyze_document", lambda *a, **k: calls.append(1) or real(*a, **k))
    outcome = fix_text(text, "d.md", Config())
    assert (len(outcome.applied), len(outcome.declined)) == (40, 0)
    assert outcome.text == text.replace("12 days", "22 days") and len(calls) <= 5


def test_a_fix_that_adds_a_diagnostic_elsewhere_is_declined_and_the_good_one_kept(monkeypatch) -> None:
    text = CALC + "About 12 days<!-- ≈ t -->.\n\nAnd 9 days<!-- ≈ t -->.\n"
    real = fixes.analyze_document

    def sabotaged(source: str, *args, **kwargs) -> DocumentAnalysis:
        analysis = real(source, *args, **kwargs)
        for i, d in enumerate(analysis.diagnostics):
            if d.fixes and source[d.span.start : d.span.end] == "12 days":  # passes, but adds warning M001
                bad = Fix(d.fixes[0].title, d.span, "<!-- margin: ignore C999 -->22 days")
                analysis.diagnostics[i] = type(d)(d.code, d.message, d.span, d.severity, d.related, (bad,), d.notes)
        return analysis

    monkeypatch.setattr(fixes, "analyze_document", sabotaged)
    outcome = fix_text(text, "d.md", Config())
    assert outcome.text == text.replace("And 9 days", "And 22 days")
    assert [(a.line, a.old, a.new) for a in outcome.applied] == [(9, "9 days", "22 days")]
    (declined,) = outcome.declined
    assert (declined.line, declined.code) == (7, "C001") and "M001" in declined.reason


def test_a_fix_offered_only_after_another_is_applied_in_a_later_round(monkeypatch) -> None:
    text = CALC + "About 9 days<!-- ≈ t --> or 12 days<!-- ≈ t -->.\n"
    real = fixes.analyze_document

    def staged(source: str, *args, **kwargs) -> DocumentAnalysis:
        analysis = real(source, *args, **kwargs)
        if "About 9 days" in source:  # the second fix is offered once the first is applied
            analysis.diagnostics = [
                type(d)(d.code, d.message, d.span, d.severity, d.related, (), d.notes)
                if source[d.span.start : d.span.end] == "12 days" else d for d in analysis.diagnostics
            ]  # fmt: skip
        return analysis

    monkeypatch.setattr(fixes, "analyze_document", staged)
    outcome = fix_text(text, "d.md", Config())
    assert outcome.text == CALC + "About 22 days<!-- ≈ t --> or 22 days<!-- ≈ t -->.\n"
    # positions are in the original text, although the second fix was found after the first moved it
    assert [(a.line, a.column, a.old) for a in outcome.applied] == [(7, 7, "9 days"), (7, 29, "12 days")]
    assert reconstruct(text, outcome) == outcome.text


@pytest.mark.parametrize("what", ["check", "problem"])
def test_a_fix_that_silently_breaks_another_check_is_declined(monkeypatch, what: str) -> None:
    # A check or problem that starts failing counts even when its diagnostic is suppressed or switched off.
    text = CALC + "<!-- problem: q -->\nIt is `2 + 2 = 4`.\n<!-- /problem -->\n\n"
    text += "<!-- problem: p -->\nAbout 12 days<!-- ≈ t -->.\n<!-- /problem -->\n"
    real = fixes.analyze_document

    def silently_broken(source: str, *args, **kwargs) -> DocumentAnalysis:
        analysis = real(source, *args, **kwargs)
        if "22 days" in source:
            if what == "check":
                analysis.checks = [replace(c, status="fail") if c.kind == "code" else c for c in analysis.checks]
            else:
                analysis.problems = [replace(p, status="fail") for p in analysis.problems]
        return analysis

    assert [p.status for p in real(text, "d.md", Config()).problems] == ["pass", "fail"]
    monkeypatch.setattr(fixes, "analyze_document", silently_broken)
    outcome = fix_text(text, "d.md", Config())
    assert outcome.text == text and not outcome.applied
    (declined,) = outcome.declined
    assert declined.reason == {"check": "the check on line 8 would become fail: '2 + 2' is 4; claim 4 holds",
                               "problem": "q would fail"}[what]  # fmt: skip


def test_fixes_that_guess_are_never_applied(monkeypatch) -> None:
    text = "```calc\nbatch = 8\nx = 2 * bacth\n```\n"
    real = fixes.analyze_document

    def with_guess(source: str, *args, **kwargs) -> DocumentAnalysis:
        analysis = real(source, *args, **kwargs)
        analysis.diagnostics = [
            type(d)(d.code, d.message, d.span, d.severity, d.related, (Fix("Replace with batch", d.span, "batch"),))
            if d.code == "N001" else d for d in analysis.diagnostics
        ]  # fmt: skip
        return analysis

    monkeypatch.setattr(fixes, "analyze_document", with_guess)
    outcome = fix_text(text, "d.md", Config())
    assert outcome.text == text and not outcome.applied
    assert [(d.code, d.reason) for d in outcome.declined] == [("N001", "N001 fixes are not applied automatically")]


@pytest.mark.parametrize(
    "before",
    [
        "\ufeff# Draft  \r\n\r\n```calc\r\nt = 22.49 days\r\n```\r\n\r\nAbout 12 days<!-- ≈ t -->.\t \r\nEnd.",
        "# Draft\r\n```calc\r\nt = 22.49 days\r\n```\r\nAbout 12 days<!-- ≈ t -->",
        "# Draft\n```calc\nt = 22.49 days\n```\nAbout 12 days<!-- ≈ t -->.  \n\n\n",
        "# Draft\r```calc\rt = 22.49 days\r```\r\rAbout 12 days<!-- ≈ t -->.\r",
    ],
)
def test_line_endings_bom_and_final_newline_are_preserved(tmp_path: Path, before: str) -> None:
    draft = tmp_path / "d.md"
    draft.write_bytes(before.encode("utf-8"))
    result = margin("check", "--fix", "--exit-zero", "d.md", cwd=tmp_path)
    assert "Fixed 1 problem in 1 file" in result.stderr, result.stderr
    assert draft.read_bytes() == before.replace("12 days", "22 days").encode("utf-8")


def test_invalid_utf8_is_left_alone(tmp_path: Path) -> None:
    draft = tmp_path / "d.md"
    raw = CALC.encode() + b"About 12 days<!-- \xe2\x89\x88 t --> \xff.\n"
    draft.write_bytes(raw)
    result = margin("check", "--fix", "--exit-zero", "d.md", cwd=tmp_path)
    assert "d.md: not valid UTF-8; not fixed" in result.stderr
    assert draft.read_bytes() == raw


def test_unified_diff_applies_with_git_and_keeps_line_endings(tmp_path: Path) -> None:
    old = "# Draft\r\n```calc\r\nt = 22.49 days\r\n```\r\nAbout 12 days<!-- ≈ t -->"
    new = fix_text(old, "d.md", Config()).text
    diff = unified_diff("d.md", old, new)
    assert diff.startswith("--- a/d.md\n+++ b/d.md\n@@ -2,4 +2,4 @@\n")
    assert "-About 12 days<!-- ≈ t -->\n\\ No newline at end of file\n" in diff
    assert " t = 22.49 days\r\n" in diff and unified_diff("d.md", old, old) == ""
    (tmp_path / "d.md").write_bytes(old.encode())
    subprocess.run(["git", "apply", "-"], input=diff.encode(), cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "d.md").read_bytes() == new.encode()


def test_cli_fix_then_diff_on_the_mistakes(tmp_path: Path) -> None:
    shutil.copytree(MISTAKES, tmp_path / "mistakes")
    files = sorted((tmp_path / "mistakes").rglob("*.md"))
    originals = {f: read(f) for f in files}
    preview = margin("check", "--diff", "mistakes", cwd=tmp_path)
    assert preview.returncode == 1 and {f: read(f) for f in files} == originals  # --diff writes nothing
    result = margin("check", "--fix", "mistakes", cwd=tmp_path)
    fixed = {f: read(f) for f in files}
    applied = 0
    for file in files:
        applied += len(assert_fixed(originals[file], fixed[file], file.name).applied)
    expected = "".join(unified_diff(f.relative_to(tmp_path).as_posix(), originals[f], fixed[f]) for f in files)
    assert preview.stdout == expected
    assert re.search(
        rf"Fixed {applied} problems? in {sum(originals[f] != fixed[f] for f in files)} files?", result.stderr
    )
    assert "C001" in result.stdout and "12 days" not in result.stdout  # the report is on the fixed text
    again = margin("check", "--fix", "mistakes", cwd=tmp_path)
    assert {f: read(f) for f in files} == fixed and again.stdout == result.stdout
    after = margin("check", "--diff", "mistakes", cwd=tmp_path)
    assert (after.returncode, after.stdout) == (0, "")


def test_cli_fix_leaves_a_file_that_is_not_utf8_alone(tmp_path: Path) -> None:
    raw = CALC.encode() + b"About 12 days<!-- \xe2\x89\x88 t --> \xff.\n"
    (tmp_path / "d.md").write_bytes(raw)
    margin("check", "--fix", "d.md", cwd=tmp_path)
    assert (tmp_path / "d.md").read_bytes() == raw  # rewriting it would turn \xff into U+FFFD
