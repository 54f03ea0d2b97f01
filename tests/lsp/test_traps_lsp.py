"""The two author traps and forward references, over the real server (issue 10).

Trap 1: an undefined name in a claim is an unknown name with did-you-mean, and no quick fix
rewrites the prose from it.  Trap 2: a calc block after a problem's answer block belongs to
the section.  A claim stated before the block that derives it is checked, with its value on hover.
"""

from __future__ import annotations

from lsprotocol import types

from tests.lsp.conftest import SHARED_SERVER, RecordingClient, character, diagnostics, encoding, open_document

TRAP_1 = "# Pod\n\n```calc\nn_chips = 8960\n```\n\nThe pod has 8960 chips<!-- = chips -->.\n"

TRAP_2 = """\
## Sharding

**Question 1:** How many bytes does each chip hold?

<details><summary>Answer</summary>

```calc
per_chip = 96e9 byte / 8
```

Each chip holds 12 GB<!-- = per_chip -->.

</details>

```calc
total = 8960 * 2
```

So the pod has 17,920<!-- = total --> halves.

Per chip: {calc}`per_chip`.
"""

FORWARD = "# Training\n\nTraining takes 22 days<!-- ≈ t -->.\n\n```calc\nt = 22.5 days\n```\n"


def position(text: str, needle: str, client: RecordingClient, at: int = 0) -> types.Position:
    """The LSP position ``at`` code points into the first ``needle`` of ``text``."""
    line = next(n for n, line_text in enumerate(text.split("\n")) if needle in line_text)
    line_text = text.split("\n")[line]
    return types.Position(line, character(line_text, line_text.index(needle) + at, encoding(client)))


async def hover(client: RecordingClient, uri: str, text: str, needle: str, at: int = 0) -> str:
    """The hover's Markdown at ``needle``."""
    found = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position(text, needle, client, at))
    )
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    return found.contents.value


async def actions_at(client: RecordingClient, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The code actions offered for ``diagnostic``."""
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diagnostic.range, types.CodeActionContext([diagnostic])
        )
    )
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


@SHARED_SERVER
async def test_trap_1_an_undefined_name_is_unknown_with_no_corrupting_fix(client: RecordingClient) -> None:
    uri = await open_document(client, "trap-1.md", TRAP_1)
    (unknown,) = await diagnostics(client, uri, 1)
    assert unknown.code == "N001"
    assert unknown.range.start == position(TRAP_1, "chips -->", client)
    assert "did you mean 'n_chips'?" in unknown.message
    actions = await actions_at(client, uri, unknown)
    assert [a for a in actions if a.kind == types.CodeActionKind.QuickFix] == []
    assert not any("1 chips" in a.title for a in actions)
    markdown = await hover(client, uri, TRAP_1, "8960 chips", 1)
    assert "1 chip" not in markdown


@SHARED_SERVER
async def test_trap_2_no_unknown_name_after_the_problem(client: RecordingClient) -> None:
    uri = await open_document(client, "trap-2.md", TRAP_2)
    found = await diagnostics(client, uri, 1)
    # `total` is a section name again; `per_chip` is local to the question and says where it is.
    assert [(d.code, d.range.start.line) for d in found] == [("N001", 20)]
    (unknown,) = found
    assert "'per_chip' is defined inside Question 1 (line 8)" in unknown.message
    assert unknown.related_information and unknown.related_information[0].location.range.start.line == 7
    markdown = await hover(client, uri, TRAP_2, "17,920", 1)
    assert "passes" in markdown and "17920" in markdown


@SHARED_SERVER
async def test_forward_reference_hover_shows_the_value_and_no_diagnostic(client: RecordingClient) -> None:
    uri = await open_document(client, "forward.md", FORWARD)
    assert await diagnostics(client, uri, 1) == []
    markdown = await hover(client, uri, FORWARD, "22 days", 1)
    assert "passes" in markdown and "22.5 days" in markdown
