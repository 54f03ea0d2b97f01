"""Long drafts over the real server: a cut completion list, inlay hints of a window, replaced analyses freed off the loop."""

from __future__ import annotations

from lsprotocol import types

from bench.corpus import book_like
from bench.shapes import giant
from scaling_core.queries.completion import LIMIT
from server.lsp.state import RELEASE_IN_BACKGROUND_FROM
from tests.lsp.conftest import SHARED_SERVER, RecordingClient, diagnostics, open_document

TEXT = giant(2_000, 1_200)  # one block of ~1,200 statements: ~900 definitions
ROWS = TEXT.split("\n")


@SHARED_SERVER
async def test_completion_in_a_long_block_is_cut_and_says_so(client: RecordingClient) -> None:
    uri = await open_document(client, "giant_completion.md", TEXT)
    await diagnostics(client, uri, 1)
    line = next(n for n, row in enumerate(ROWS) if row.startswith("flops_250 = "))
    document = types.TextDocumentIdentifier(uri)
    found = await client.text_document_completion_async(types.CompletionParams(document, types.Position(line, 0)))
    assert isinstance(found, types.CompletionList) and found.is_incomplete and len(found.items) == LIMIT
    typed = await client.text_document_completion_async(types.CompletionParams(document, types.Position(line, 8)))
    assert isinstance(typed, types.CompletionList) and not typed.is_incomplete  # "flops_25": a short list
    assert [i.label for i in typed.items] == ["flops_25", *(f"flops_{n}" for n in range(250, 260))]


@SHARED_SERVER
async def test_inlay_hints_of_a_window_are_the_values_ending_in_it(client: RecordingClient) -> None:
    uri = await open_document(client, "giant_inlay.md", TEXT)
    await diagnostics(client, uri, 1)
    first = next(n for n, row in enumerate(ROWS) if row.startswith("B_100 = "))
    window = types.Range(types.Position(first, 0), types.Position(first + 8, 0))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(types.TextDocumentIdentifier(uri), window)
    )
    shown = [(h.position.line, h.label) for h in hints]
    assert shown[:3] == [(first, "  = 320"), (first + 1, "  = 1.72e11 FLOP"), (first + 2, "  = 872 us")], shown
    assert {line for line, _ in shown} == {first, first + 1, first + 2, first + 5, first + 6, first + 7}


async def _released(client: RecordingClient) -> int:
    stats = await client.protocol.send_request_async("margin/serverStats", {})
    return int(stats.analyses_released_in_background)


def _type_at_top(client: RecordingClient, uri: str, version: int) -> None:
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 2), types.Position(0, 2)), text="x"
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
    )


@SHARED_SERVER
async def test_a_long_drafts_replaced_analysis_is_freed_off_the_event_loop(client: RecordingClient) -> None:
    long_text = book_like(23_000)
    assert len(long_text) >= RELEASE_IN_BACKGROUND_FROM  # a million characters: its analysis takes long to free
    uri = await open_document(client, "long_release.md", long_text)
    await diagnostics(client, uri, 1)
    before = await _released(client)
    _type_at_top(client, uri, 2)
    await diagnostics(client, uri, 2)
    assert await _released(client) == before + 1  # the first version's analysis, by a thread of its own
    short = await open_document(client, "short_release.md", "# Short\n\n```calc\nx = 2\n```\n")
    await diagnostics(client, short, 1)
    _type_at_top(client, short, 2)
    await diagnostics(client, short, 2)
    assert await _released(client) == before + 1  # a short draft's is freed at once (~3 ms on 10,000 lines)
