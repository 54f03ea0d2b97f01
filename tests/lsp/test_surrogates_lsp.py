"""The real server over stdio with astral characters (UTF-16 surrogate pairs) before checked values.

A position inside a character means the start of that character (docs/editors.md): the client below
computes every position and the text after an edit on its own, with that rule, and the server agrees.
"""

from __future__ import annotations

from lsprotocol import types

from tests.lsp.conftest import SHARED_SERVER, RecordingClient, character, diagnostics, encoding, open_document

DRAFT = "```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\n😀a𝑥b😀 about **170 ms**<!-- ≈ t --> and `2 * 3 = 7`.\n"
LINE = 4


def _inside(line_text: str, column: int, name: str) -> int:
    """A position inside the character at ``column`` (between its units), in the encoding's units."""
    return character(line_text, column, name) + {"utf-16": 1, "utf-8": 2, "utf-32": 0}[name]  # 😀, 𝑥: 4 bytes


def _ranges(found: list[types.Diagnostic]) -> set[tuple[str, int, int, int, int]]:
    return {(str(d.code), d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
            for d in found}  # fmt: skip


def _expected(text: str, name: str) -> set[tuple[str, int, int, int, int]]:
    line = text.split("\n")[LINE]
    claim, value = line.index("170 ms"), line.index("= 7`") + 2
    return {("C001", LINE, character(line, claim, name), LINE, character(line, claim + 6, name)),
            ("C001", LINE, character(line, value, name), LINE, character(line, value + 1, name))}  # fmt: skip


@SHARED_SERVER
async def test_ranges_hover_and_an_edit_inside_surrogate_pairs_match_the_client(client: RecordingClient) -> None:
    name = encoding(client)
    uri = await open_document(client, "astral.md", DRAFT)
    assert _ranges(await diagnostics(client, uri, 1)) == _expected(DRAFT, name)

    line = DRAFT.split("\n")[LINE]
    hover = await client.text_document_hover_async(
        types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(LINE, character(line, line.index("170"), name))
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent) and "170 ms" in hover.contents.value

    # (In UTF-32 no position is inside a character: the same edits, from character starts.)
    # Delete from inside the first 😀 to after "a": the client snaps the start to the start of 😀.
    edited = await _delete(client, uri, 2, DRAFT, (_inside(line, 0, name), character(line, 2, name)), (0, 2))
    assert edited.split("\n")[LINE].startswith("𝑥b😀 about")
    # Delete from the line's start to inside the 😀 after "b": the end snaps to that 😀's start.
    line = edited.split("\n")[LINE]
    edited = await _delete(client, uri, 3, edited, (0, _inside(line, 2, name)), (0, 2))
    assert edited.split("\n")[LINE].startswith("😀 about")


async def _delete(
    client: RecordingClient, uri: str, version: int, text: str, units: tuple[int, int], columns: tuple[int, int]
) -> str:
    """Send a deletion of ``units`` on line LINE; the client's own text has ``columns`` deleted; ranges agree."""
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(LINE, units[0]), types.Position(LINE, units[1])), text=""
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [edit])
    )
    line = text.split("\n")[LINE]
    edited = text.replace(line, line[: columns[0]] + line[columns[1] :])
    assert _ranges(await diagnostics(client, uri, version)) == _expected(edited, encoding(client))
    return edited
