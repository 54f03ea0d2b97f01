"""Arithmetic in LaTeX math: read as checked chains when ``latex_math`` is on, never by default.

The corpus below is written as scaling books write math: right and wrong
segments side by side, prices with ``$`` in prose, math in code, comments and
fences.  With the setting on, every planted error is caught, nothing else is
flagged, and nothing crashes; with it off (the default), math is not read.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scaling_core import analyze_document
from scaling_core.config import Config, config_from_mapping
from scaling_core.diagnostics import Severity
from scaling_core.document.extract import extract
from scaling_core.document.incremental import RegionCache
from scaling_core.document.latex import find_math
from scaling_core.document.regions import MathRegion
from scaling_core.document.results import DocumentAnalysis

ON = Config(latex_math=True)

#: Correct math, each with how many checks it holds (0: nothing in it may be read as a check).
RIGHT: list[tuple[str, int]] = [
    (r"$B > 2 * F / 2400 = 2 * 24576 / 2400 = 20$", 1),
    (r"$\frac{2 \cdot 8192 \cdot 8192}{9 \times 10^{10}} \approx 1.5\,\text{ms}$", 1),
    (r"$$\frac{2 \cdot 4096 \cdot 8192}{4.5 \times 10^{10}} \approx 1.5\,\mathrm{ms}$$", 1),
    (r"$2 \times 16 \times 4096 = 131{,}072$", 1),
    (r"$\left(2 \cdot 8\right) \cdot 128 = 2048$", 1),
    (r"$10^{3} \cdot 4 = 4000$", 1),
    (r"$\sqrt{2 \times 10^{6} \cdot 4096 / 8192} = 1000$", 1),
    (r"$\lceil 8192 / 3000 \rceil = 3$", 1),
    (r"$50\% \cdot 4 = 2$", 1),
    (r"$24\,576 / 48 = 512$", 1),
    (r"$\frac{10\,\text{GB}}{2\,\text{GB/s}} = 5\,\text{s}$", 1),
    (r"$3 \times 1050 \times 4096 / (9 \times 10^{10}) = 143\,\mu s$", 1),
    (r"$\frac{1.6 \times 10^{4}\,\text{bytes}}{1\,\text{GB}/\text{s}} = 16\,\mu\text{s}$", 1),
    (r"$2 \cdot 3 = 6, \quad 4 \cdot 5 = 20.$", 2),
    (r"$2^{10} = 1024$", 1),
    (r"$2 \cdot 512 = 1024 = 2^{10}$", 1),
    (r"\(2 \cdot 21 = 42\)", 1),
    (r"\[6 \cdot 7 = 42\]", 1),
    (r"$x = 2 \cdot 3 = 6.0$", 1),
    (r"$10\,\text{GB} / 2\,\text{GB}/\text{s} = 5\,\text{s}$", 1),
    ("> $$2 \\cdot 3\n> = 6$$", 1),
    (r"$(2 \quad + 4) \cdot 2 = 12$", 1),
    # Read but not checked: symbols, other relations, a claim that is not a number, ambiguity.
    (r"$E = mc^2$", 0),
    (r"$T_{\text{math}} = \frac{2BDF}{C} = 2 \cdot B$", 0),
    (r"$\alpha \approx 0.5$", 0),
    (r"$\sum_i x_i = 1$", 0),
    (r"$x = 5$", 0),
    (r"$2 \cdot 4 > 7$", 0),
    (r"$3 \times 10^{11} \sim 10^{12}$", 0),
    (r"$20 = 2 \cdot 24576 / 2400$", 0),
    (r"$1{,}5 \cdot 2 = 3$", 0),
    (r"$4.6 \times 10^{14} / 1.2 \times 10^{12} \approx 383$", 0),
    (r"$2 \cdot 3 \text{ minus } 1 = 5$", 0),
    (r"$2^{10}\,\text{B} = 1024$", 0),
    (r"$6 / 2\,\text{ms} = 3\,\text{ms}$", 0),
    (r"$2(3 + 4) = 14$", 0),
    (r"$\$2 \times 3 = \$6$", 0),
    # Prices and other dollars in prose are not math.
    ("It costs $5 per hour and $3 per GB, so 2 * 3 = 7 is not read.", 0),
    ("Between $5-$10 per chip: 2 + 2 = 5 dollars.", 0),
    ("A v5e is $1.20/hour; 8 chips = $9.60/hour (2 * 3 = 7).", 0),
    (r"Escaped \$2 \cdot 3 = 7\$ is prose.", 0),
    # Math inside code, comments and fences is not math.
    (r"`$2 \cdot 3 = 7$` in code", 0),
    (r"<!-- $2 \cdot 3 = 7$ -->", 0),
    ("```text\n$2 \\cdot 3 = 7$\n```", 0),
]

#: Wrong math: (segment, the claimed number as written, which the diagnostic must point at).
WRONG: list[tuple[str, str]] = [
    (r"$2 \cdot 24576 / 2400 = 30$", "30"),
    (r"$\frac{2 \cdot 8192 \cdot 8192}{9 \times 10^{10}} \approx 15\,\text{ms}$", r"15\,\text{ms}"),
    (r"$2 \times 16 \times 4096 = 262{,}144$", "262{,}144"),
    (r"$\frac{10\,\text{GB}}{2\,\text{GB/s}} = 50\,\text{s}$", r"50\,\text{s}"),
    (r"$B > 2 F / 2400 = 2 \cdot 24576 / 2400 = 2$", "2"),
    (r"$\sqrt{4 \times 10^{6}} = 200$", "200"),
    (r"\(2 \cdot 21 = 24\)", "24"),
    (r"$3 \times 1050 \times 4096 / (9 \times 10^{10}) = 14\,\mu s$", r"14\,\mu s"),
    (r"$2 \cdot 3 = 6, \quad 4 \cdot 5 = 25$", "25"),
]

ALIGNED_RIGHT = r"""$$
\begin{aligned}
T &= \frac{2 \cdot 16 \cdot 8192 \cdot 8192}{1.97 \times 10^{14}} \\
  &\approx 1.1 \times 10^{-5}\,\text{s}
\end{aligned}
$$"""
ALIGNED_WRONG = ALIGNED_RIGHT.replace("1.1 \\times 10^{-5}", "2.2 \\times 10^{-5}")


def corpus() -> tuple[str, list[tuple[int, int, int]], list[tuple[int, int, str]]]:
    """The corpus text; where each right segment lies (with its check count); where each claim of a wrong one lies."""
    parts: list[str] = ["# Rooflines\n\nSome prose before the math.\n"]
    right: list[tuple[int, int, int]] = []
    wrong: list[tuple[int, int, str]] = []
    offset = len(parts[0])
    segments: list[tuple[str, int, str | None]] = [(text, count, None) for text, count in RIGHT]
    segments.append((ALIGNED_RIGHT, 1, None))
    segments += [(text, 1, claim) for text, claim in WRONG] + [(ALIGNED_WRONG, 1, r"2.2 \times 10^{-5}\,\text{s}")]
    for text, count, claim in segments:
        paragraph = f"\n{text}\n"
        start = offset + 1
        if claim is None:
            right.append((start, start + len(text), count))
        else:
            at = start + text.rindex(claim)
            wrong.append((at, at + len(claim), claim))
        parts.append(paragraph)
        offset += len(paragraph)
    return "".join(parts), right, wrong


def analyze(text: str, config: Config = ON) -> DocumentAnalysis:
    return analyze_document(text, "x.md", config)


def test_the_corpus_catches_every_planted_error_and_raises_no_false_alarm() -> None:
    text, right, wrong = corpus()
    analysis = analyze(text)
    failures = [(d.span.start, d.span.end) for d in analysis.diagnostics if d.code == "C001"]
    assert sorted(failures) == [(start, end) for start, end, _ in wrong]
    others = [(d.code, text[d.span.start : d.span.end], d.message) for d in analysis.diagnostics
              if d.code != "C001" and d.severity <= Severity.WARNING]  # fmt: skip
    assert others == []
    for start, end, count in right:
        mine = [c for c in analysis.checks if start <= c.span.start and c.span.end <= end]
        assert len(mine) == count, (text[start:end], [(c.status, c.message) for c in mine])
        assert all(c.status == "pass" for c in mine), (text[start:end], [c.message for c in mine])


def test_a_failure_points_at_the_claimed_number_in_the_math() -> None:
    text = r"Time: $\frac{2 \cdot 8192 \cdot 8192}{9 \times 10^{10}} \approx 15\,\text{ms}$ per layer."
    (failure,) = [d for d in analyze(text).diagnostics if d.code == "C001"]
    assert text[failure.span.start : failure.span.end] == r"15\,\text{ms}"
    assert "1.491 ms" in failure.message
    (check,) = analyze(text).checks
    assert text[check.span.start : check.span.end] == text[text.index(r"\frac") : text.index("$ per")]


def test_a_symbolic_link_is_skipped_and_the_numeric_links_are_checked() -> None:
    text = "$B > 2 * F / 2400 = 2 * 24576 / 2400 = 20$"
    (check,) = analyze(text).checks
    assert text[check.span.start : check.span.end] == "2 * 24576 / 2400 = 20"
    assert check.status == "pass"


def test_a_skipped_link_that_looks_like_arithmetic_is_hinted_and_symbols_are_not() -> None:
    cases = {
        "$B > 2 * F / 2400 = 2 * 24576 / 2400 = 20$": ["2 * F / 2400"],
        r"$4.6 \times 10^{14} / 1.2 \times 10^{12} \approx 383$": [r"4.6 \times 10^{14} / 1.2 \times 10^{12}"],
        r"$6 / 2\,\text{ms} = 3\,\text{ms}$": [r"6 / 2\,\text{ms}"],
        r"$T = 2 \cdot 3 = 6$": [],
        r"$E = mc^2$": [],
        r"$x_1 = 5$": [],
        r"$T_{\text{math}} = \frac{2BDF}{C} = 2 \cdot B$": [],
    }
    for text, skipped in cases.items():
        analysis = analyze(text)
        hints = [d for d in analysis.diagnostics if d.severity == Severity.HINT]
        assert [text[d.span.start : d.span.end] for d in hints] == skipped, text
        assert all(d.code == "C002" and "not checked" in d.message for d in hints)


def test_math_is_not_read_by_default() -> None:
    text, _right, wrong = corpus()
    analysis = analyze_document(text, "x.md")
    assert [d for d in analysis.diagnostics if d.code == "C001"] == []
    assert analysis.checks == []
    assert len(wrong) == len(WRONG) + 1


def test_the_scan_keeps_math_only_with_the_setting_and_only_math_that_may_hold_a_chain() -> None:
    """Math is looked for only with ``latex_math``; then math with no ``=`` or ``≈`` (``$B$``, ``$\\alpha$``),
    which is never read, is no region either."""
    text = r"With $B$ and $\alpha$, $2 \cdot 3 = 6$ and $a \approx 4$; so $\{x\}$ and $y \simeq 2$."
    assert [r for r in extract(text).regions if isinstance(r, MathRegion)] == []
    kept = [r.text for r in extract(text, latex_math=True).regions if isinstance(r, MathRegion)]
    assert kept == [r"2 \cdot 3 = 6", r"a \approx 4", r"y \simeq 2"]
    assert [r.text for r in find_math(text, 0)] == [r"B", r"\alpha", *kept[:2], r"\{x\}", kept[2]]


def test_turning_the_setting_on_and_off_rescans_what_the_cache_holds() -> None:
    """The chunk cache's scans were made with or without math: a change of the setting scans again, so the
    document checked with one cache across the change reads as a fresh analysis with each setting."""
    text = "# A\n\nSee $2 \\cdot 24576 / 2400 = 30$ and `1 + 1 = 2`.\n\n## B\n\nAnd $2 + 2 = 4$.\n"
    cache = RegionCache()
    for config in (Config(), ON, Config(), ON):
        reused = analyze_document(text, "x.md", config, cache=cache)
        fresh = analyze_document(text, "x.md", config)
        assert [(c.span, c.status) for c in reused.checks] == [(c.span, c.status) for c in fresh.checks]
        assert [(d.code, d.span) for d in reused.diagnostics] == [(d.code, d.span) for d in fresh.diagnostics]
        assert len(reused.checks) == (3 if config.latex_math else 1)
        assert cache.chunks.latex_math is config.latex_math


def test_the_setting_is_read_from_a_project_table() -> None:
    config, problems = config_from_mapping({"latex_math": True})
    assert config.latex_math and problems == []
    config, problems = config_from_mapping({"latex-math": "yes"})
    assert not config.latex_math and problems == ["latex-math: must be true or false"]
    assert Config().latex_math is False


@pytest.mark.parametrize(
    ("text", "contents"),
    [
        ("$a$ and $b$", ["a", "b"]),
        ("costs $5 per hour and $3 per GB", []),
        ("$5-$10", []),
        ("from $ 2 = 3 $ here", []),
        ("a $2 = 3$4 b", []),
        (r"\$2 = 3\$", []),
        ("$$\n2 = 3\n$$", ["\n2 = 3\n"]),
        ("$$2 = 3$$ and $4$", ["2 = 3", "4"]),
        (r"\(2 = 3\) and \[4 = 5\]", ["2 = 3", "4 = 5"]),
        ("$x$ <!-- $z$ --> $w$", ["x", "w"]),
        ("$$ unclosed", []),
    ],
)
def test_math_delimiters_follow_the_dollar_rules(text: str, contents: list[str]) -> None:
    found = find_math(text, 0)
    assert [r.text for r in found] == contents
    assert all(text[r.content_span.start : r.content_span.end] == r.text for r in found)


def test_extraction_finds_math_in_paragraphs_tables_and_answer_blocks_but_not_code() -> None:
    text = (
        "Intro $2 \\cdot 3 = 6$.\n\n| a | b |\n|---|---|\n| $4 = 4$ | `$5$` |\n\n"
        "<details>\n\n$$7 = 7$$\n\n</details>\n\n```calc\nx = 1 # $8$\n```\n\n    $9$ indented code\n"
    )
    regions = [r for r in extract(text, latex_math=True).regions if isinstance(r, MathRegion)]
    assert [r.text for r in regions] == ["2 \\cdot 3 = 6", "4 = 4", "7 = 7"]


@pytest.mark.parametrize(
    "text",
    [
        r"$\frac{$",
        "$$",
        "$$$",
        "$$$$",
        r"$\left($",
        r"$\text{$",
        r"$\frac{1}{$ and $}{2}$",
        "$^$",
        "$10^{}$",
        r"$\sqrt[3]{8} = 2$",
        r"$\frac12 = 0.5$",
        r"$" + "{" * 300 + "1" + "}" * 300 + " = 1$",
        r"$" + r"\left(" * 200 + "1" + r"\right)" * 200 + " = 1$",
        r"$1e999 = 1$",
        r"$10^{400} = 1$",
        r"$\mu = 3$",
        r"$\text{} = 2 \cdot 1$",
        "$2 = 2 = 2 = $",
        "$= 2 \\cdot 3$",
        "$\\\\ = 3$",
        r"$\begin{cases} 1 = 1 \end{cases}$",
        r"$\frac{1}{0} = 1$",
        "$1 / 0 = 1$",
        r"$\lceil 2.5 = 3$",
        "$(2 \\cdot 3 = 6$",
        "$2 \\cdot 3) = 6$",
        "$\u00e9 = 2 \\cdot 1$",
        "$2 \\cdot 3\r\n= 6$",
        "$0.5^{0.5} = 0.7$",
    ],
)
def test_no_crash_on_odd_math(text: str) -> None:
    analysis = analyze(f"Before {text} after.\n")
    assert analysis.path == "x.md"
    assert all(d.code != "E999" for d in analysis.diagnostics)


_PIECES = [
    "$", "$$", "\\(", "\\)", "\\[", "\\]", "\\frac", "\\sqrt", "\\text", "\\mu", "\\left(", "\\right)",
    "\\cdot", "\\times", "\\approx", "{", "}", "{,}", "\\,", "^", "_", "10", "2", "3.5", "=", "<", "+", "-",
    "/", "(", ")", " ", "\n", "> ", "ms", "GB", "B", "\\\\", "&", ",", ".", "`", "<!--", "-->", "\\%", "%",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_no_crash_on_random_math(pieces: list[str]) -> None:
    text = "".join(pieces)
    analysis = analyze(text)
    for check in analysis.checks:
        assert 0 <= check.span.start <= check.span.end <= len(text)
    assert all(d.code != "E999" for d in analysis.diagnostics)


def test_spans_follow_an_edit_when_results_are_reused() -> None:
    cache = RegionCache()
    text = "# A\n\nSee $2 \\cdot 24576 / 2400 = 30$ here.\n"
    first = analyze_document(text, "x.md", ON, cache=cache)
    edited = "# A longer title\n\n" + text[len("# A\n\n") :]
    second = analyze_document(edited, "x.md", ON, cache=cache)
    fresh = analyze_document(edited, "x.md", ON)
    assert [d.span for d in second.diagnostics] == [d.span for d in fresh.diagnostics]
    (failure,) = [d for d in second.diagnostics if d.code == "C001"]
    assert edited[failure.span.start : failure.span.end] == "30"
    assert len(first.checks) == 1 and cache.reused >= 1


def test_analysis_is_deterministic() -> None:
    text, _right, _wrong = corpus()
    first, second = analyze(text), analyze(text)
    assert [(d.code, d.span, d.message) for d in first.diagnostics] == [
        (d.code, d.span, d.message) for d in second.diagnostics
    ]
