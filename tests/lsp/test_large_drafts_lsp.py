"""Editor requests on a long draft over the real server: a cut completion list, inlay hints of a window."""

from __future__ import annotations

from lsprotocol import types

from bench.shapes import giant
from scaling_core.queries.completion import LIMIT
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
