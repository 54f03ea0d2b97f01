"""Edits in a workspace of drafts that import each other: only what reads the edited draft is checked again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from scaling_core import DocumentAnalysis, analyze_document
from scaling_core.document.analysis import ImportContext
from scaling_core.document.imports import ImportMemo
from server.lsp.documents import Document, apply_changes
from server.lsp.scheduling import QUEUED_FOR_WORKER
from server.lsp.state import State
from server.workspace import make_loader

ROOT = "```calc\nD = 8192\n```\n"
LEAF = '```calc\nimport "root.md"\nx = 2 * D\n```\n\nIt is 16384<!-- = x -->.\n'


class Recorder:
    def __init__(self) -> None:
        self.published: list[str] = []

    def __call__(self, document: Document, analysis: DocumentAnalysis) -> None:
        self.published.append(Path(document.path).name)


async def settle(state: State) -> None:
    for _ in range(200):
        await asyncio.sleep(0.01)
        if all(task.done() for task in state._pending.values()):
            return


def edit(state: State, name: str, folder: Path, line: int, column: int, text: str) -> None:
    """What ``didChange`` does: the new version, its analysis, and those of the drafts that read it."""
    uri = (folder / name).as_uri()
    document = state.documents[uri]
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, column), types.Position(line, column)), text=text
    )
    state.documents[uri] = apply_changes(document, document.version + 1, [change], "utf-16")
    state.schedule(uri)
    for other in state.importers_of(uri):
        state.invalidate(other)


async def workspace(tmp_path: Path, leaves: int) -> tuple[State, Recorder]:
    recorder = Recorder()
    state = State(recorder)
    state.set_root(tmp_path)
    drafts = {"root.md": ROOT, "alone.md": "Just `1 + 1 = 2`.\n"}
    drafts |= {f"leaf{k}.md": LEAF for k in range(leaves)}
    for name, text in drafts.items():
        uri = (tmp_path / name).as_uri()
        state.documents[uri] = Document(uri, 1, text)
        state.schedule(uri)
    await settle(state)
    recorder.published.clear()
    return state, recorder


def test_typing_in_a_draft_nothing_imports_checks_that_draft_alone(tmp_path: Path) -> None:
    async def scenario() -> None:
        state, recorder = await workspace(tmp_path, 5)
        for column in range(3):
            edit(state, "alone.md", tmp_path, 0, 4 + column, "x")
            await settle(state)
        assert recorder.published == ["alone.md"] * 3
        edit(state, "leaf0.md", tmp_path, 4, 0, "Well. ")  # a leaf imports, but nothing imports it
        await settle(state)
        assert recorder.published[3:] == ["leaf0.md"]

    asyncio.run(scenario())


def test_an_edit_of_an_imported_draft_rechecks_its_importers_with_one_analysis_of_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        state, recorder = await workspace(tmp_path, 5)
        analysed = state.import_memo.analysed
        edit(state, "root.md", tmp_path, 1, 8, "1")  # D = 81921
        await settle(state)
        assert sorted(recorder.published) == ["leaf0.md", "leaf1.md", "leaf2.md", "leaf3.md", "leaf4.md", "root.md"]
        assert state.import_memo.analysed == analysed + 1  # the new root once, shared by the five leaves
        leaf = (tmp_path / "leaf3.md").as_uri()
        assert [d.code for d in state.analyses[leaf][1].diagnostics] == ["C001"]  # 2 * 81921 is not 16384

    asyncio.run(scenario())


def test_a_shared_import_is_what_a_fresh_analysis_gives(tmp_path: Path) -> None:
    # Reused only while every draft it read is unchanged and no cycle or depth limit could differ.
    files = {"a.md": '```calc\nimport "b.md"\na = b + 1\n```\n', "b.md": '```calc\nimport "c.md"\nb = c\n```\n'}
    files["c.md"] = "```calc\nc = 1\n```\n"
    texts = dict(files)
    loader = make_loader(tmp_path, {str(tmp_path / name): text for name, text in texts.items()}, display=str)
    memo = ImportMemo()

    def analyse(name: str, shared: bool) -> DocumentAnalysis:
        context = ImportContext(loader, memo=memo if shared else None)
        return analyze_document(texts[name], str(tmp_path / name), context=context)

    first = analyse("a.md", True)
    assert memo.analysed == 2 and [v.display for v in first.values] == ["2"]
    again = analyse("a.md", True)
    assert memo.shared == 1 and again.values[0].display == "2"  # b.md shared, with what it read (c.md)
    texts["c.md"] = "```calc\nc = 5\n```\n"
    loader = make_loader(tmp_path, {str(tmp_path / name): text for name, text in texts.items()}, display=str)
    changed = analyse("a.md", True)
    assert changed.values[0].display == "6" == analyse("a.md", False).values[0].display  # c.md changed: b.md again
    texts["c.md"] = '```calc\nimport "a.md"\nc = 1\n```\n'  # now a cycle through the importer
    loader = make_loader(tmp_path, {str(tmp_path / name): text for name, text in texts.items()}, display=str)
    cyclic, fresh = analyse("a.md", True), analyse("a.md", False)
    assert [d.code for d in cyclic.diagnostics] == [d.code for d in fresh.diagnostics] and "N007" in [
        d.code for d in fresh.diagnostics
    ]


def test_an_edit_at_the_end_of_a_100_draft_import_chain_reaches_the_first(tmp_path: Path) -> None:
    # Imports nest to any depth (resolved deepest first, without recursion); each draft analysed once.
    async def scenario() -> None:
        recorder = Recorder()
        state = State(recorder)
        state.set_root(tmp_path)
        drafts = {f"c{k}.md": f'```calc\nimport "c{k + 1}.md"\n```\n' for k in range(99)}
        drafts["c0.md"] += "\nIt is 7<!-- = x -->.\n"
        drafts["c99.md"] = "```calc\nx = 7\n```\n"
        for name, text in drafts.items():
            uri = (tmp_path / name).as_uri()
            state.documents[uri] = Document(uri, 1, text)
            state.schedule(uri)
        await settle(state)
        first = (tmp_path / "c0.md").as_uri()
        assert [c.status for c in state.analyses[first][1].checks] == ["pass"]
        recorder.published.clear()
        edit(state, "c99.md", tmp_path, 1, 5, "0")  # x = 70
        for _ in range(30):
            await settle(state)
        assert sorted(recorder.published) == sorted(drafts)  # every importer, near or far, again
        assert [d.code for d in state.analyses[first][1].diagnostics] == ["C001"]

    asyncio.run(scenario())


def test_an_edit_that_many_drafts_import_hands_their_analyses_to_the_worker_a_few_at_a_time(tmp_path: Path) -> None:
    # 30 importers: handed over at once, their results came back to the event loop in bursts (long loop turns).
    async def scenario() -> None:
        state, recorder = await workspace(tmp_path, 30)
        waiting: list[int] = []
        analyze_now = state.analyze_now

        def counting(document: Document) -> DocumentAnalysis | None:
            waiting.append(state._executor._work_queue.qsize())  # handed over, not yet started
            return analyze_now(document)

        state.analyze_now = counting  # type: ignore[method-assign]
        edit(state, "root.md", tmp_path, 1, 8, "1")
        await settle(state)
        assert len(waiting) == 31 and max(waiting) <= QUEUED_FOR_WORKER - 1
        assert sorted(recorder.published) == sorted(["root.md", *(f"leaf{k}.md" for k in range(30))])
        assert all([d.code for d in state.analyses[(tmp_path / f"leaf{k}.md").as_uri()][1].diagnostics] == ["C001"]
                   for k in range(30))  # fmt: skip

    asyncio.run(scenario())
