"""Hover over the real server: the inlay's value, a failing check's derivation, valid Markdown (issue 10)."""

from __future__ import annotations

from lsprotocol import types
from markdown_it import MarkdownIt

from tests.lsp.conftest import SHARED_SERVER, RecordingClient, character, diagnostics, encoding, open_document

DRAFT = (
    "# Training 🚀\n"
    "\n"
    "```calc\n"
    "N = 70e9\n"
    "D = 2e12\n"
    "chips = 1024\n"
    "t = 6 * N * D / (chips * 989e12 FLOP/s * 0.4) -> days\n"
    "x = 197e12 / 8e11 byte\n"
    "```\n"
    "\n"
    "速度: training takes about **33 days**<!-- ≈ t --> at {calc}`x -> FLOP/byte`.\n"
)


async def hover_at(client: RecordingClient, uri: str, needle: str, at: int = 1) -> str:
    """The hover's Markdown at ``at`` code points into ``needle`` (found in the draft)."""
    line = next(n for n, text in enumerate(DRAFT.split("\n")) if needle in text)
    line_text = DRAFT.split("\n")[line]
    column = character(line_text, line_text.index(needle) + at, encoding(client))
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, column))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    return hover.contents.value


async def inlay_labels(client: RecordingClient, uri: str) -> dict[int, str]:
    """Each line's inlay label."""
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(20, 0))
        )
    )
    return {hint.position.line: str(hint.label).strip().removeprefix("= ") for hint in hints or []}


@SHARED_SERVER
async def test_hover_headline_is_the_inlay_value(client: RecordingClient) -> None:
    uri = await open_document(client, "hover-headline.md", DRAFT)
    await diagnostics(client, uri, 1)
    labels = await inlay_labels(client, uri)
    assert labels[6] == "24 days"
    markdown = await hover_at(client, uri, "t = 6")
    assert markdown.splitlines()[0].endswith("= **24 days**")
    assert "s/FLOP" not in markdown


@SHARED_SERVER
async def test_failing_claim_hover_shows_how_the_value_was_derived(client: RecordingClient) -> None:
    uri = await open_document(client, "hover-claim.md", DRAFT)
    found = await diagnostics(client, uri, 1)
    assert [d.code for d in found] == ["C001"]
    markdown = await hover_at(client, uri, "33 days")
    assert markdown.startswith("**Check fails**")
    assert markdown.index("not ≈ 33 days") < markdown.index("Defined as:")
    assert "- `t = 6 * N * D / (chips * 989e12 FLOP/s * 0.4) -> days` = 24 days (line 7)" in markdown
    assert "- `N = 70e9` = 7e10 (line 4)" in markdown


@SHARED_SERVER
async def test_inline_value_hover_is_valid_markdown_with_the_inlays_unit(client: RecordingClient) -> None:
    uri = await open_document(client, "hover-inline.md", DRAFT)
    await diagnostics(client, uri, 1)
    labels = await inlay_labels(client, uri)
    assert labels[10] == "246 FLOP/byte"
    markdown = await hover_at(client, uri, "{calc}", 2)
    rendered = MarkdownIt("commonmark").render(markdown)
    assert rendered.startswith("<p><strong><code>x -&gt; FLOP/byte</code></strong> = <strong>246 FLOP/byte</strong>")
    assert "`" not in rendered
