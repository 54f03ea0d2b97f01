"""The realistic corpus: chapters written like a scaling book, checked as a user would check them.

``tests/realistic/*.md`` are chapters in the style of a real scaling book (front
matter, prose, tables, LaTeX, Liquid tags, MyST roles and directives, book-style
problems) with a hundred ``arith = value`` code spans.  Their arithmetic is
right everywhere except the planted errors listed in ``expected.toml``, which
also lists every warning the corpus should raise and why it names a real
ambiguity.  ``math/`` has its own ``margin.toml`` that turns LaTeX math checking
on; the other chapters are checked with the default settings (math off).

Each chapter is analysed with the settings ``margin check`` would use for it
(the nearest ``margin.toml`` or ``pyproject.toml``), and:

(a) the errors are exactly the planted ones (no false error, no missed erratum);
(b) the warnings are exactly the expected ones;
(c) no readable code span is skipped silently: each has a check, or a diagnostic
    (a hint at least) saying why it was not checked;
(d) at least 60 code spans are checked.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from scaling_core import CheckStatus, Config, DocumentAnalysis, Severity, analyze_document
from scaling_core.document.analysis import ImportContext
from server.workspace import UsageError, find_project, make_loader

CORPUS = Path(__file__).resolve().parent
CHAPTERS = sorted(CORPUS.rglob("*.md"))
MINIMUM_CHECKED_SPANS = 60

#: A relation a code span can state: ``=`` (not part of ``<=``, ``>=``, ``!=``, ``==``, ``=>``), ``==``, ``≈``, ``~``.
RELATION = re.compile(r"==|(?<![<>!=])=(?![=>])|≈|~")
DIGIT = re.compile(r"\d")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def is_readable(content: str) -> bool:
    """Whether a code span's text looks like checked arithmetic.

    Readable means: some relation (``=``, ``==``, ``≈`` or ``~``) has a digit
    somewhere before it and a digit somewhere after it in the span's text.
    So `` `2 * 8 = 16` ``, `` `sqrt(2e6 * 4096 / 8192) = 1000` `` and
    `` `bf16[4096, 7168] = 58.7MB` `` are readable; `` `B = 512` ``,
    `` `2BDF` `` and `` `P('X', None)` `` are not.
    """
    return any(
        DIGIT.search(content[: m.start()]) and DIGIT.search(content[m.end() :]) for m in RELATION.finditer(content)
    )


@dataclass(frozen=True)
class CodeSpan:
    """An inline code span of a chapter: its content's offsets (code points) and text."""

    start: int
    end: int
    text: str
    line: int


def _prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines outside front matter, fenced code blocks and HTML comments, with their offsets.

    Lines inside a comment or an ordinary fence are blanked (so a span cannot
    reach across them); MyST directive fences (```` ```{note} ````) are
    containers whose bodies are prose.
    """
    offset = 0
    fence: str | None = None
    directives: list[str] = []
    in_comment = False
    in_front_matter = text.startswith("---\n")
    for number, line in enumerate(text.splitlines(keepends=True)):
        body = line.rstrip("\r\n")
        if in_front_matter:
            if number > 0 and body == "---":
                in_front_matter = False
            yield offset, ""
        elif fence is not None:
            if body.strip().startswith(fence[0] * len(fence)) and set(body.strip()) == {fence[0]}:
                fence = None
            yield offset, ""
        elif in_comment:
            if "-->" in body:
                in_comment = False
                tail = body.index("-->") + 3
                yield offset + tail, body[tail:]
            else:
                yield offset, ""
        elif (match := FENCE.match(body)) is not None:
            marker, info = match.group(1), match.group(2).strip()
            if directives and not info and marker[0] == directives[-1][0] and len(marker) >= len(directives[-1]):
                directives.pop()
            elif info.startswith("{"):
                directives.append(marker)
            else:
                fence = marker
            yield offset, ""
        else:
            kept, position = [], 0
            while (opening := body.find("<!--", position)) >= 0:
                kept.append(body[position:opening] + " " * 4)
                closing = body.find("-->", opening + 4)
                if closing < 0:
                    in_comment = True
                    position = len(body)
                    break
                kept.append(" " * (closing + 3 - opening - 4))
                position = closing + 3
            kept.append(body[position:])
            yield offset, "".join(kept)
        offset += len(line)


def code_spans(text: str) -> list[CodeSpan]:
    """The inline code spans of a Markdown chapter (CommonMark backtick runs), except ``{calc}`` roles.

    A span is opened by a run of backticks and closed by the next run of the
    same length within its paragraph; the content's single surrounding spaces
    are dropped, as CommonMark does.
    """
    spans: list[CodeSpan] = []
    paragraph: list[tuple[int, str]] = []
    for offset, line in [*_prose_lines(text), (len(text), "")]:
        if line.strip():
            paragraph.append((offset, line))
            continue
        if paragraph:
            spans += _spans_in(paragraph, text)
        paragraph = []
    return spans


def _spans_in(paragraph: list[tuple[int, str]], text: str) -> list[CodeSpan]:
    # Join the paragraph's lines, remembering each character's offset in the chapter.
    chars, offsets = [], []
    for offset, line in paragraph:
        chars.append(line + "\n")
        offsets += [offset + i for i in range(len(line))] + [offset + len(line)]
    joined = "".join(chars)
    runs = [(m.start(), m.end()) for m in re.finditer(r"(?<!\\)`+", joined)]
    spans, i = [], 0
    while i < len(runs):
        start, end = runs[i]
        closing = next((j for j in range(i + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start), None)
        if closing is None:
            i += 1
            continue
        content_start, content_end = end, runs[closing][0]
        if not joined[:start].endswith("{calc}"):
            raw = joined[content_start:content_end]
            if raw.startswith(" ") and raw.endswith(" ") and raw.strip():
                content_start, content_end = content_start + 1, content_end - 1
            begin, finish = offsets[content_start], offsets[content_end - 1] + 1
            spans.append(CodeSpan(begin, finish, text[begin:finish], text.count("\n", 0, begin) + 1))
        i = closing + 1
    return spans


@dataclass(frozen=True)
class Chapter:
    """One chapter, analysed with the settings ``margin check`` uses for it (or why it could not be)."""

    name: str
    text: str
    analysis: DocumentAnalysis | None
    config_error: str | None


@cache
def chapters() -> tuple[Chapter, ...]:
    """Every chapter of the corpus, analysed once per test session."""
    found = []
    for path in CHAPTERS:
        name = path.relative_to(CORPUS).as_posix()
        text = path.read_text("utf-8")
        try:
            project = find_project(path)
        except UsageError as error:
            found.append(Chapter(name, text, None, str(error)))
            continue
        loader = ImportContext(make_loader(project))
        found.append(Chapter(name, text, analyze_document(text, name, project.config, context=loader), None))
    return tuple(found)


@cache
def expected() -> dict[str, list[dict[str, object]]]:
    """``expected.toml``: the planted errors and the expected warnings."""
    return tomllib.loads((CORPUS / "expected.toml").read_text("utf-8"))


def _unanalysed() -> list[str]:
    return [
        f"{c.name}: not analysed, its configuration was rejected: {c.config_error}"
        for c in chapters()
        if c.analysis is None
    ]


def _found(severity: Severity) -> dict[tuple[str, int, str], str]:
    """(file, line, code) -> the message, of every diagnostic with ``severity`` in the corpus."""
    found = {}
    for chapter in chapters():
        if chapter.analysis is None:
            continue
        for d in chapter.analysis.diagnostics:
            if d.severity == severity:
                key = (chapter.name, chapter.analysis.line(d.span.start), d.code)
                found[key] = f"{chapter.text[d.span.start : d.span.end]!r}: {d.message}"
    return found


def _compare(kind: str, severity: Severity) -> list[str]:
    """The differences between the diagnostics found and ``expected.toml``'s ``kind`` entries."""
    found = _found(severity)
    wanted = {(e["file"], e["line"], e["code"]): str(e.get("what") or e["why"]) for e in expected()[kind]}
    lines = [f"unexpected {key}: {found[key]}" for key in sorted(found.keys() - wanted.keys())]
    lines += [f"missed {key}: {wanted[key]}" for key in sorted(wanted.keys() - found.keys())]
    return lines + _unanalysed()


def test_expectations_point_at_their_text() -> None:
    """Each expected diagnostic names text that is on its line, so the list stays in step with the chapters."""
    texts = {c.name: c.text.splitlines() for c in chapters()}
    wrong = [
        f"{e['file']}:{e['line']}: {e['text']!r} is not on that line"
        for kind in ("error", "warning")
        for e in expected()[kind]
        if str(e["text"]) not in texts[str(e["file"])][int(str(e["line"])) - 1]
    ]
    assert wrong == []


def test_errors_are_exactly_the_planted_ones() -> None:
    """(a) No false error, and every planted error caught at its line with its code."""
    differences = _compare("error", Severity.ERROR)
    assert differences == [], "\n".join(differences)


def test_warnings_are_exactly_the_expected_ones() -> None:
    """(b) Each warning is one that expected.toml names as a real ambiguity."""
    differences = _compare("warning", Severity.WARNING)
    assert differences == [], "\n".join(differences)


def _checked(analysis: DocumentAnalysis, span: CodeSpan) -> bool:
    return any(
        span.start <= c.span.start and c.span.end <= span.end and c.status != CheckStatus.SKIP for c in analysis.checks
    )


def _explained(analysis: DocumentAnalysis, span: CodeSpan) -> bool:
    return any(span.start <= d.span.start and d.span.end <= span.end for d in analysis.diagnostics)


def test_no_readable_span_is_skipped_silently() -> None:
    """(c) Every readable code span has a check, or a diagnostic (a hint at least) saying why it was skipped."""
    silent = [
        f"{chapter.name}:{span.line}: `{span.text}`"
        for chapter in chapters()
        if chapter.analysis is not None
        for span in code_spans(chapter.text)
        if is_readable(span.text) and not _checked(chapter.analysis, span) and not _explained(chapter.analysis, span)
    ]
    assert silent == [], "readable code spans skipped silently:\n" + "\n".join(silent + _unanalysed())
    assert _unanalysed() == []


def test_at_least_sixty_code_spans_are_checked() -> None:
    """(d) The corpus is a real test of code spans: at least 60 of them are checked."""
    checked = [
        span for chapter in chapters() if chapter.analysis is not None for span in code_spans(chapter.text)
        if _checked(chapter.analysis, span)
    ]  # fmt: skip
    assert len(checked) >= MINIMUM_CHECKED_SPANS, f"only {len(checked)} code spans checked; " + "; ".join(_unanalysed())


def test_latex_math_is_checked_only_where_a_setting_turns_it_on() -> None:
    """With the default settings, the math chapter's LaTeX (its planted error too) is left alone."""
    chapter = CORPUS / "math" / "training.md"
    text = chapter.read_text("utf-8")
    analysis = analyze_document(text, "math/training.md", Config())
    on_math_lines = [
        f"{analysis.line(d.span.start)}: {d.code} {d.message}"
        for d in analysis.diagnostics
        if "$" in text.splitlines()[analysis.line(d.span.start) - 1]
    ]
    assert on_math_lines == []
    latex = [e for e in expected()["error"] if e["file"] == "math/training.md" and "\\" in str(e["text"])]
    assert latex, "the math chapter should plant an error in LaTeX"


QUESTION = re.compile(r"^\*\*(?:Question|Problem|Exercise)\b", re.MULTILINE)
EXERCISE = re.compile(r"^ {0,3}(?:`{3,}|:{3,})\{exercise\}", re.MULTILINE)


def test_every_question_is_a_problem() -> None:
    """Each book-style question (``**Question 10: Fun with AllToAll:**`` too) and each MyST exercise is a problem."""
    missing = []
    for chapter in chapters():
        if chapter.analysis is None:
            continue
        analysis = chapter.analysis
        for match in QUESTION.finditer(chapter.text):
            line = analysis.line(match.start())
            if not any(analysis.line(p.title_span.start) == line for p in analysis.problems):
                missing.append(f"{chapter.name}:{line}: {chapter.text[match.start() :].splitlines()[0]}")
        for match in EXERCISE.finditer(chapter.text):
            if not any(p.span.start <= match.start() <= p.span.end for p in analysis.problems):
                missing.append(f"{chapter.name}:{analysis.line(match.start())}: {match.group()}")
    assert missing == [], "not recognised as problems:\n" + "\n".join(missing + _unanalysed())


@pytest.mark.parametrize(
    ("content", "readable"),
    [
        ("2 * 8 = 16", True),
        ("12*20*28 / 2*2 = 1,680", True),
        ("sqrt(2e6 * 4096 / 8192) = 1000", True),
        ("bf16[4096, 7168] = 58.7MB", True),
        ("2 * 8192 * 32768 * 2 / 4.5e10 = 1.07e9 / 4.5e10 ~ 24ms", True),
        ("B = 512", False),
        ("2BDF", False),
        ("x <= 5", False),
        ("NamedSharding(mesh, P('X', None))", False),
    ],
)
def test_readable_means_a_relation_with_digits_on_both_sides(content: str, readable: bool) -> None:
    """The definition (c) relies on, pinned down."""
    assert is_readable(content) == readable


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_the_scanner_finds_every_span_markdown_it_finds(chapter: Path) -> None:
    """Outside MyST directives (which markdown-it reads as code blocks), the span scanner agrees with markdown-it."""
    text = chapter.read_text("utf-8")
    found = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        previous = ""
        for child in token.children or []:
            if child.type == "code_inline" and not previous.endswith("{calc}"):
                found.append(child.content)
            previous = child.content if child.type == "text" else ""
    assert Counter(found) - Counter(span.text for span in code_spans(text)) == Counter()


def test_code_spans_are_found_as_commonmark_finds_them() -> None:
    """The span scanner skips fences, comments and {calc} roles, reads directive bodies, and keeps offsets exact."""
    text = (
        "---\ntitle: `1 = 1`\n---\n\nSee `2 * 3 = 6` and {calc}`t -> days`.\n\n"
        "```calc\nx = `4 = 4`\n```\n\n<!-- `5 = 5` -->\n``a ` b`` and `` `7 = 7` ``\n\n"
        "```{note}\nInside: `8 * 2 = 16`\n```\n"
    )
    found = [(s.text, s.line, text[s.start : s.end]) for s in code_spans(text)]
    assert found == [
        ("2 * 3 = 6", 5, "2 * 3 = 6"),
        ("a ` b", 12, "a ` b"),
        ("`7 = 7`", 12, "`7 = 7`"),
        ("8 * 2 = 16", 15, "8 * 2 = 16"),
    ]
