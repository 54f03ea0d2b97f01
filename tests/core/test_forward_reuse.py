"""Claims before the block that defines their name (issue 15): an edit costs what it changed.

A claim or inline value that reads a name defined below waits for the end of
its scope (``forward.py``).  In a run replayed from the cache, its resolution
is replayed too, unless what it read below changed: an edit elsewhere looks up
no waiting claim, however many the draft holds.  The result always equals a
full analysis (``observable``).
"""

from __future__ import annotations

from scaling_core import analyze_document
from scaling_core.document.incremental import RegionCache
from tests.core.test_incremental import observable

SECTION = """\
## Step {i}

At batch {b} the step takes about {us} µs<!-- ≈ t_{i} --> and needs {b} rows<!-- = B_{i} -->.

```calc
B_{i} = {b}
t_{i} = 2 * B_{i} * 8192 * 8192 FLOP / tpu_v5e.flops_bf16 -> us
```

So a step is {us} µs<!-- ≈ t_{i} --> once {{calc}}`B_{i}` rows are in.

"""


def forward_draft(sections: int) -> str:
    """``sections`` sections, each stating its results in prose before the calc block deriving them."""
    parts = ["# Claims before their blocks\n\n"]
    for i in range(sections):
        b = 64 * (i % 8 + 1)
        us = f"{2 * b * 8192 * 8192 / 197e12 * 1e6:.3g}"
        parts.append(SECTION.format(i=i, b=b, us=us))
    return "".join(parts)


def resolved_after_edits(sections: int) -> list[int]:
    """Waiting claims looked up again per edit (a digit in a block, typing in prose), each checked against a full run."""
    text = forward_draft(sections)
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    analyze_document(text, "draft.md", cache=cache)  # every run recorded, then replayed
    counts = []
    middle = f"## Step {sections // 2}\n"
    for edited in (
        text.replace(f"{middle}\nAt batch", f"{middle}\nAt a batch", 1),  # typing in a paragraph
        text.replace(f"B_{sections // 2} = ", f"B_{sections // 2} = 1", 1),  # a digit in the block below a claim
        text.replace("# Claims before", "# Claims made before", 1),  # typing at the top: every run moves
    ):
        assert edited != text
        incremental = analyze_document(edited, "draft.md", cache=cache)
        counts.append(cache.resolved)
        assert observable(incremental) == observable(analyze_document(edited, "draft.md"))
        text = edited
    return counts


def test_an_edit_looks_up_only_the_waiting_claims_it_touched() -> None:
    small, large = resolved_after_edits(8), resolved_after_edits(64)
    assert small == large  # no growth with the number of waiting claims
    assert max(large) <= 3  # the edited section's claims at most


def test_a_replayed_waiting_claim_follows_a_new_value_below_it() -> None:
    text = forward_draft(4)
    cache = RegionCache()
    analyze_document(text, "draft.md", cache=cache)
    analyze_document(text, "draft.md", cache=cache)
    # The claim's paragraph and the block are in different chunks when a cut falls between them;
    # either way the claim must read the new value.
    edited = text.replace("B_2 = 192", "B_2 = 250", 1)
    incremental = analyze_document(edited, "draft.md", cache=cache)
    full = analyze_document(edited, "draft.md")
    assert observable(incremental) == observable(full)
    assert [c.status for c in full.checks].count("fail") == 3  # "192 rows" and the two claims on t_2


def test_a_claim_that_stays_unknown_is_not_read_again_at_each_edit() -> None:
    """A claim waiting for a misspelt name (defined nowhere) is resolved at the end of the draft at every
    analysis; replayed with its run, the names in its text are not read from the text again (its step keeps
    them), however many such claims the draft holds."""
    from unittest.mock import patch

    from scaling_core.document import forward

    def reads_per_edit(sections: int) -> int:
        text = forward_draft(sections).replace("<!-- ≈ t_", "<!-- ≈ tt_")
        cache = RegionCache()
        analyze_document(text, "draft.md", cache=cache)
        analyze_document(text, "draft.md", cache=cache)
        edited = text.replace("# Claims before", "# Claims made before", 1)  # every run moves
        calls: list[str] = []
        original = forward.identifiers

        def counting(region_text: str) -> tuple[str, ...]:
            calls.append(region_text)
            return original(region_text)

        with patch.object(forward, "identifiers", counting):
            incremental = analyze_document(edited, "draft.md", cache=cache)
        unknown = [d for d in incremental.diagnostics if d.code == "N001"]
        assert len(unknown) == 2 * sections and all("did you mean 't_" in d.notes[0] for d in unknown)
        assert observable(incremental) == observable(analyze_document(edited, "draft.md"))
        return len(calls)

    assert reads_per_edit(8) == reads_per_edit(64) == 0
