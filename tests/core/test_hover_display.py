"""Hovers agree with the inlay, show how a failing check's value was derived, and are valid Markdown."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from scaling_core import DocumentAnalysis
from scaling_core.queries.hover import hover_at
from tests.conftest import analyze

TRAINING = "```calc\nN = 70e9\nD = 2e12\nchips = 1024\nt = 6 * N * D / (chips * 989e12 FLOP/s * 0.4) -> days\n```\n"


def hover(analysis: DocumentAnalysis, needle: str, at: int = 1) -> str:
    """The hover at ``at`` characters into the first ``needle`` of the draft."""
    text = hover_at(analysis, analysis.text.index(needle) + at)
    assert text is not None, f"no hover at {needle!r}"
    return text


def inlay(analysis: DocumentAnalysis, starts_with: str) -> str:
    """The inlay value of the statement or inline value whose text starts with ``starts_with``."""
    found = [v for v in analysis.values if analysis.text[v.span.start :].startswith(starts_with)]
    assert len(found) == 1
    return found[0].display


def html(markdown: str) -> str:
    """The hover as an editor renders it (CommonMark)."""
    return str(MarkdownIt("commonmark").enable("table").render(markdown))


def test_definition_hover_shows_the_inlay_value_after_conversion_and_inference() -> None:
    analysis = analyze(TRAINING)
    shown = inlay(analysis, "t = 6")
    assert shown == "24 days"
    headline = hover(analysis, "t = 6").splitlines()[0]
    assert f"= **{shown}**" in headline
    assert "FLOP" not in headline.partition("** = ")[2]  # not the value before `-> days` (2.074e6 s/FLOP)


def test_a_step_with_a_unitless_numerator_is_marked_and_a_conversion_shown() -> None:
    text = (
        "```calc\nN = 70e9\nD = 2e12\nchips = 1024\n"
        "y = 6 * N * D / (chips * 989e12 FLOP/s * 0.4)\nt = y -> days\nu = t * 2\n```\n"
    )
    analysis = analyze(text)
    markdown = hover(analysis, "u = t")
    assert markdown.splitlines()[0].endswith(f"= **{inlay(analysis, 'u = t')}**")
    assert "- `t = y -> days` = 24 days (line 6)" in markdown
    (step,) = [line for line in markdown.splitlines() if line.startswith("- `y = ")]
    assert "s/FLOP" in step and "no unit" in step  # its numerator's unit is inferred where it is used


def test_failing_claim_hover_shows_the_derivation_under_the_verdict() -> None:
    analysis = analyze(TRAINING + "\nTraining takes about 33 days<!-- ≈ t -->.\n")
    markdown = hover(analysis, "33 days")
    assert markdown.startswith("**Check fails**")
    verdict = markdown.index("not ≈ 33 days")
    chain = markdown.index("`t = 6 * N * D / (chips * 989e12 FLOP/s * 0.4) -> days` = 24 days (line 5)")
    assert verdict < chain
    for step in ("`N = 70e9` = 7e10 (line 2)", "`D = 2e12`", "`chips = 1024`"):
        assert step in markdown[verdict:]


def test_failing_code_span_hover_shows_the_derivation() -> None:
    analysis = analyze("```calc\nN = 70e9\nD = 2e12\n```\n\nThe cost is `6 * N * D / 1e24 = 0.9` here.\n")
    markdown = hover(analysis, "6 * N")
    assert markdown.startswith("**Check fails**")
    assert markdown.index("**`6 * N * D / 1e24`** = **0.84**") > markdown.index("not = 0.9")
    assert "`N = 70e9` = 7e10 (line 2)" in markdown and "`D = 2e12` = 2e12 (line 3)" in markdown


def test_failing_calc_check_hover_shows_the_derivation() -> None:
    analysis = analyze(TRAINING.removesuffix("```\n") + "t == 30 days\n```\n")
    markdown = hover(analysis, "t == 30")
    assert markdown.startswith("**Check fails**")
    assert "`t = 6 * N * D / (chips * 989e12 FLOP/s * 0.4) -> days` = 24 days" in markdown


def test_inline_value_hover_is_valid_markdown_with_the_inlays_value_and_unit() -> None:
    text = "```calc\nx = 197e12 / 8e11 byte\n```\n\nThe intensity is {calc}`x -> FLOP/byte` here.\n"
    analysis = analyze(text)
    shown = inlay(analysis, "{calc}")
    assert shown == "246 FLOP/byte"
    for needle, at in (("{calc}", 2), ("FLOP/byte`", 1)):
        markdown = hover(analysis, needle, at)
        rendered = html(markdown)
        headline = rendered.split("</p>")[0]
        assert "<code>x -&gt; FLOP/byte</code>" in headline
        assert f"<strong>{shown}</strong>" in headline
        assert "`" not in rendered  # every backtick opened a code span and closed it
        assert "{calc}" not in rendered


def test_verdict_text_is_escaped_so_products_do_not_turn_into_emphasis() -> None:
    analysis = analyze("```calc\nB = 4\nD = 8\n```\n\nSo `2*B*D = 65` bytes.\n")
    rendered = html(hover(analysis, "2*B"))
    assert "<em>" not in rendered
    assert "2*B*D" in re.sub(r"<[^>]+>", "", rendered)


def test_hover_on_a_failing_unitless_check_shows_the_number_without_a_unit() -> None:
    text = "`64 * 400 / 8 = 25.6TB/s`\n"
    analysis = analyze(text)
    (check,) = analysis.checks
    hover = hover_at(analysis, check.span.start + 1)
    assert hover is not None
    assert "computed: 3200 (no unit)" in hover and "difference" not in hover
