"""A chunk's scan placed further on (``shift_scan``): every field moved, as scanning the moved text gives."""

from __future__ import annotations

from dataclasses import fields

import pytest

from scaling_core.document.extract import scan_chunk
from scaling_core.document.regions import ChunkScan
from scaling_core.document.shift import shift_scan

#: A chunk with something in every field of its scan.
EVERYTHING = """\
## Timing

```python calc
x = 1
```

```calc
B = 128
t = 2 * B   # margin: ignore N008
y = 3 +
```

**Problem 1:** how long?

It takes 256<!-- = t -->, and that is <!-- = t -->.

In math, $2 \\cdot 128 = 256$ (with the `latex_math` setting).

<details><summary>Answer</summary>

About `2 * 128 = 256`.

</details>

<!-- problem: kv -->
`B = 128`
<!-- /problem -->

<!-- margin: off -->
Ignored `1 + 1 = 3`.
<!-- margin: on -->
"""


def test_the_chunk_fills_every_field_of_its_scan() -> None:
    scan = scan_chunk(EVERYTHING, latex_math=True)
    empty = [f.name for f in fields(ChunkScan) if f.name not in ("open_at_end", "starts", "names")
             and not getattr(scan, f.name)]  # fmt: skip
    assert empty == []  # else the tests below would not see that field moved


@pytest.mark.parametrize("delta", [1, 100])
def test_a_shifted_scan_equals_the_scan_of_the_text_moved_down(delta: int) -> None:
    scan = scan_chunk(EVERYTHING, latex_math=True)
    scan.starts, scan.names[(True, 0, 1)] = [0], ("B",)  # the driver's notes on the scan: not the copy's
    shifted = shift_scan(scan, delta)
    assert shifted == scan_chunk("\n" * delta + EVERYTHING, latex_math=True)  # every compared field
    assert set(vars(shifted)) == {f.name for f in fields(ChunkScan)}
    assert shifted.starts is None and shifted.names == {}


def test_a_scan_placed_without_its_regions_moves_the_rest_into_lists_of_its_own() -> None:
    scan = scan_chunk(EVERYTHING, latex_math=True)
    placed = shift_scan(scan, 40, regions=False)
    moved = scan_chunk("\n" * 40 + EVERYTHING, latex_math=True)
    assert placed.regions == [] and placed.headings == moved.headings and placed.answer_marks == moved.answer_marks
    assert placed == ChunkScan([], *[getattr(moved, f.name) for f in fields(ChunkScan)[1:]])
    quiet = scan_chunk("Plain prose.\n")
    copy = shift_scan(quiet, 5, regions=False)
    assert all(getattr(copy, name) is not getattr(quiet, name) for name in ("headings", "diagnostics", "bold_starts"))


def test_results_keep_their_spans_from_where_they_start_and_move_whole() -> None:
    """A definition keeps its end only when its name does not give it, a value and a check their length: each
    span made, moved or not, is the one it was made from."""
    from scaling_core.document.results import Binding, CheckKind, CheckResult, CheckStatus, ValueResult
    from scaling_core.document.shift import move_check, move_each, move_value
    from scaling_core.text import Span

    named = Binding.at("t_step", None, Span(1000, 1006), "d.md")
    wider = Binding.at("α", None, Span(2000, 2009), "d.md")  # a span other than its name (written out)
    assert (named.stop, wider.stop) == (None, 2009)
    value = ValueResult.at(Span(5000, 5300), None, None, "t")
    check = CheckResult.at(CheckKind.CODE, Span(7000, 7012), CheckStatus.PASS, "=", "6", None, None)
    for delta in (0, 3, 100_000, -500):
        a, b = move_each([(named, 0), (wider, delta)], delta)
        assert (a.span, b.span) == (Span(1000 + delta, 1006 + delta), Span(2000 + 2 * delta, 2009 + 2 * delta))
        assert (a.end, b.end) == (a.span.end, b.span.end) and (a.stop, b.stop is None) == (None, False)
        assert (
            move_value(delta, value).span
            == Span(5000 + delta, 5300 + delta)
            == (value.start + delta, value.end + delta)
        )
        assert move_check(delta, check).span == Span(7000 + delta, 7012 + delta)
