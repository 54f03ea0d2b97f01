"""Problems (both forms, local scopes, verdicts), suppressions and settings."""

from __future__ import annotations

from tests.conftest import analyze, codes

BOOK_STYLE = """\
## Worked problems

**Question 1 [PCIe]:** A question.

{% details Click here for the answer. %}

```calc
B = 128
t = 2 * B * 8192 * 8192 / h100.flops_bf16
```

**Answer:** about 17 µs<!-- ≈ t -->.

### A sub-heading inside the answer

Still Question 1: `B * 2 = 256`.

{% enddetails %}

**Problem 2:** Another, with B reused: `B * 3 = 300`.

## Next section

`B * 2 = 256`
"""


#: Explicit problems inside another: each region belongs to the outermost problem holding it.
NESTED_PROBLEMS = """\
# Draft

```calc
W = 4 s
```

<!-- problem: outer -->

<!-- problem: first -->
```calc
a = 2
```
<!-- /problem -->

```calc
L = 3 s
```

<!-- problem: second -->
```calc
b = L * 2 + W
```

**Answer:** 10 s<!-- ≈ b -->.
<!-- /problem -->
<!-- /problem -->

```calc
x = L + 1 s
```
"""


def test_nested_problems_hold_their_regions_in_the_outermost() -> None:
    doc = analyze(NESTED_PROBLEMS)
    outer, first, second = doc.problems
    assert (outer.ident, first.ident, second.ident) == ("outer", "first", "second")
    for name in ("a = 2", "L = 3", "b = L"):  # between the inner problems too
        assert doc.problem_at(NESTED_PROBLEMS.index(name)) is outer
    assert doc.problem_at(NESTED_PROBLEMS.index("x = L")) is None
    (unknown,) = [d for d in doc.diagnostics if d.code == "N001"]  # b sees L: the same problem's
    assert unknown.span.start == NESTED_PROBLEMS.index("L + 1")
    assert unknown.notes[0] == "'L' is defined inside outer (line 16); names in a problem are local to it"


def test_book_style_problems_with_details_blocks_and_local_names() -> None:
    doc = analyze(BOOK_STYLE)
    assert [(p.ident, p.title, p.status, p.passed, p.total) for p in doc.problems] == [
        ("Question 1", "PCIe", "pass", 2, 2),
        ("Problem 2", "Problem 2", "untested", 0, 0),
    ]
    # B was local to Question 1: later spans naming B are not checked (a hint C002 each says so).
    assert codes(doc) == ["P002", "C002", "C002"]
    assert len(doc.checks) == 2


def test_problem_failure_points_at_each_failing_check() -> None:
    doc = analyze("**Exercise 3:** `2 * 2 = 5` and `3 * 3 = 9` and `4 * 4 = 17`\n")
    (problem_diagnostic,) = [d for d in doc.diagnostics if d.code == "P001"]
    assert problem_diagnostic.message == "Exercise 3 fails: 2 of 3 checks fail"
    assert [doc.text[r.span.start : r.span.end] for r in problem_diagnostic.related] == ["2 * 2 = 5", "4 * 4 = 17"]


def test_untested_problem_is_a_hint_and_explicit_problems_scope_names() -> None:
    doc = analyze(
        "**Question 1:** nothing\n\n<!-- problem: p -->\n<!-- calc\nx = 2\n-->\n`x * 2 = 4`\n<!-- /problem -->\n\n`x * 2 = 4`\n"
    )
    assert [(p.ident, p.status) for p in doc.problems] == [("Question 1", "untested"), ("p", "pass")]
    assert codes(doc) == ["P002", "C002"]
    assert len(doc.checks) == 1  # the last span names an unknown x: not checked (hint C002)


def test_suppression_comment_for_the_next_line_only() -> None:
    doc = analyze("<!-- margin: ignore C001 -->\n`2 * 2 = 5`\n\n`2 * 2 = 5`\n")
    assert codes(doc) == ["C001"]
    assert doc.index.position(doc.diagnostics[0].span.start)[0] == 3


def test_suppression_without_codes_hides_everything_on_the_next_line() -> None:
    assert codes(analyze("<!-- margin: ignore -->\n`1 GB + 1 s = 2` `2 * 2 = 5`\n")) == []


def test_off_on_region_and_calc_line_ignore() -> None:
    text = "<!-- margin: off -->\n`2 * 2 = 5`\n<!-- margin: on -->\n```calc\n1 GB + 1 s # margin: ignore\n1 GB + 1 s\n```\n"
    doc = analyze(text)
    assert codes(doc) == ["U001"]
    assert doc.index.position(doc.diagnostics[0].span.start)[0] == 5


def test_severity_settings_change_or_silence_codes() -> None:
    from scaling_core.diagnostics import Severity

    doc = analyze("`2 * 2 = 5`", severity={"C001": Severity.WARNING})
    assert [(d.code, d.severity) for d in doc.diagnostics] == [("C001", Severity.WARNING)]
    assert analyze("`2 * 2 = 5`", severity={"C001": None}).diagnostics == []


def test_untrusted_python_block_says_so_once() -> None:
    doc = analyze("```python calc\nimport os\nos.system('echo hi')\n```\n")
    assert codes(doc) == ["T001"]
    assert "not trusted" in doc.diagnostics[0].message


def test_reading_an_untrusted_python_block_prints_no_warning_of_pythons_parser() -> None:
    # `1if` and "\d" make Python's parser warn (SyntaxWarning) on stderr: noise in `margin check`'s output.
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        doc = analyze("```python calc\nx = 1if True else 2\ndef f():\n    return '\\d'\n```\n")
    assert codes(doc) == ["T001"] and [str(w.message) for w in caught] == []


def test_claim_quick_fix_keeps_the_authors_style() -> None:
    doc = analyze(
        "```calc\nt = 25.31 days\nn = 31250\n```\nAbout **22 days**<!-- ≈ t --> and 32,000<!-- = n --> runs.\n"
    )
    fixes = [(doc.text[d.fixes[0].span.start : d.fixes[0].span.end], d.fixes[0].text) for d in doc.diagnostics]
    assert fixes == [("22 days", "25 days"), ("32,000", "31,250")]


def test_configured_chips_override_and_extend_the_catalog() -> None:
    chips = {
        "my_chip": {
            "title": "Mine",
            "fields": {"flops_bf16": {"value": "100 TFLOP/s", "source": "https://example.com"}},
        }
    }
    doc = analyze("`1e14 / my_chip.flops_bf16 = 1 s`", chips=chips)
    assert [c.status for c in doc.checks] == ["pass"]
