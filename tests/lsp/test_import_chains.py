"""Chains of open drafts importing each other: an edit re-checks the importers, each draft analysed once.

Driven as the analysis thread is: the edited draft, then ``importers_of`` it, one after the other.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from scaling_core import DocumentAnalysis, analyze_document
from scaling_core.document import analysis as analysis_module
from scaling_core.document.analysis import ImportContext
from server.lsp.documents import Document, OpenDocuments, OpenTexts
from server.lsp.state import State


def link(k: int) -> str:
    head = f'import "l{k - 1:02}.md"\n' if k else ""
    return (
        f"# Link {k}\n\n```calc\n{head}x{k} = {f'x{k - 1} + 1' if k else '1'}\n```\n\nIt is {k + 1}<!-- = x{k} -->.\n"
    )


class Editor:
    """Open drafts in a folder; an edit analyses the draft, then the drafts that may read it."""

    def __init__(self, folder: Path, drafts: dict[str, str]) -> None:
        self.folder = folder
        self.state = State(lambda *args: None)
        self.state.set_root(folder)
        for name, text in drafts.items():
            (folder / name).write_text(text, "utf-8")
            self.open(name, text)

    def uri(self, name: str) -> str:
        return (self.folder / name).as_uri()

    def open(self, name: str, text: str) -> None:
        self.state.documents[self.uri(name)] = Document(self.uri(name), 1, text)
        self.analyse([self.uri(name)])

    def edit(self, name: str, text: str) -> list[str]:
        uri = self.uri(name)
        self.state.documents[uri] = Document(uri, self.state.documents[uri].version + 1, text)
        return self.analyse([uri, *self.state.importers_of(uri)])

    def analyse(self, uris: list[str]) -> list[str]:
        for uri in uris:
            document = self.state.documents[uri]
            analysis = self.state.analyze_now(document)
            assert analysis is not None
            self.state.analyses[uri] = (document.version, analysis)
        return [Path(uri).name for uri in uris]

    def analysis(self, name: str) -> DocumentAnalysis:
        return self.state.analyses[self.uri(name)][1]

    def fresh(self, name: str) -> DocumentAnalysis:
        """A new analysis of the draft's open text, without region cache or shared imports."""
        document = self.state.documents[self.uri(name)]
        return analyze_document(
            document.text, document.path, self.state.config, context=ImportContext(self.state.loader)
        )


def same_results(editor: Editor, name: str) -> None:
    """The server's analysis of ``name`` gives what a fresh one gives, imported definitions included."""
    got, fresh = editor.analysis(name), editor.fresh(name)
    assert got.diagnostics == fresh.diagnostics
    assert [(v.span, v.display) for v in got.values] == [(v.span, v.display) for v in fresh.values]
    assert repr(list(got.checks)) == repr(list(fresh.checks)) and repr(got.problems) == repr(fresh.problems)
    assert {n: (b.path, b.span, repr(b.value)) for n, b in got.exports.items()} == {
        n: (b.path, b.span, repr(b.value)) for n, b in fresh.exports.items()
    }
    imported = [repr(r.binding) for r in got.references if r.binding is not None and r.binding.path != got.path]
    assert imported == [
        repr(r.binding) for r in fresh.references if r.binding is not None and r.binding.path != got.path
    ]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each draft is analysed (by file name), imported or open."""
    analyses: Counter[str] = Counter()
    analyse = analysis_module._analyze

    def counting(text, path, *args):  # type: ignore[no-untyped-def]
        analyses[Path(path).name] += 1
        return analyse(text, path, *args)

    monkeypatch.setattr(analysis_module, "_analyze", counting)
    return analyses


def test_a_root_edit_analyses_each_draft_of_the_chain_once(tmp_path: Path, counted: Counter[str]) -> None:
    drafts = {f"l{k:02}.md": link(k) for k in range(40)}
    editor = Editor(tmp_path, drafts)
    counted.clear()
    rechecked = editor.edit("l00.md", drafts["l00.md"].replace("x0 = 1", "x0 = 20"))
    assert sorted(rechecked) == sorted(drafts)
    assert counted == Counter(list(drafts))  # the root's own analysis is the one its importers share, and so on down
    assert [d.code for d in editor.analysis("l39.md").diagnostics] == ["C001"]  # 59 now, not 40
    for name in ("l01.md", "l20.md", "l39.md"):
        same_results(editor, name)


def test_a_root_edit_asks_the_loader_once_per_import(tmp_path: Path) -> None:
    drafts = {f"l{k:02}.md": link(k) for k in range(60)}
    editor = Editor(tmp_path, {})
    asked: list[tuple[str, str]] = []
    load = editor.state.loader

    def counting(importer: str, written: str) -> tuple[str, str] | None:
        asked.append((importer, written))
        return load(importer, written)

    editor.state.loader = counting
    for name, text in drafts.items():
        (tmp_path / name).write_text(text, "utf-8")
        editor.open(name, text)
    asked.clear()
    editor.edit("l00.md", drafts["l00.md"].replace("x0 = 1", "x0 = 3"))
    assert len(asked) == len(set(asked)) == 59  # not every nested import again for each importer
    asked.clear()
    editor.edit("l59.md", drafts["l59.md"] + "\nMore prose.\n")  # nothing imports it: it alone
    assert len(asked) <= 59


def test_shared_analyses_give_what_fresh_ones_give_through_cycles_missing_drafts_and_closes(tmp_path: Path) -> None:
    drafts = {f"l{k:02}.md": link(k) for k in range(12)}
    editor = Editor(tmp_path, drafts)
    steps = [
        ("l00.md", drafts["l00.md"].replace("x0 = 1", "x0 = 5")),
        ("l00.md", '```calc\nimport "l11.md"\nx0 = 1\n```\n'),  # a cycle through every draft
        ("l04.md", drafts["l04.md"] + '\n```calc\nimport "nope.md"\n```\n'),
        ("l00.md", drafts["l00.md"]),
        ("l11.md", drafts["l11.md"] + '\n```calc\nimport "l02.md"\nimport "l09.md"\ny = x2 + x9\n```\n'),
        ("l06.md", drafts["l06.md"].replace("x5 + 1", "x5 + 1 m")),
        ("l07.md", drafts["l07.md"].replace("x6 + 1", "x6 + 100")),  # not saved
    ]
    for name, text in steps:
        rechecked = editor.edit(name, text)
        for other in rechecked:
            same_results(editor, other)
    editor.open("nope.md", "```calc\nnope = 1\n```\n")
    assert editor.analysis("l11.md").values[-1].display == "112 m"  # y = x2 + x9: 3 + (7 m + 100 + 1 + 1)
    editor.state.close(editor.uri("l07.md"))  # read from the disk now: the text it was opened with
    for other in editor.edit("l00.md", drafts["l00.md"].replace("x0 = 1", "x0 = 7")):
        same_results(editor, other)
    assert editor.analysis("l11.md").values[-1].display == "25 m"  # 9 + (13 m + 1 + 1 + 1)


def test_a_draft_changed_on_the_disk_is_read_again_at_the_next_edit(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("```calc\nb = 1\n```\n", "utf-8")  # never opened
    text = '```calc\nimport "b.md"\na = b\n```\n'
    editor = Editor(tmp_path, {"a.md": text})
    assert editor.analysis("a.md").values[-1].display == "1"
    (tmp_path / "b.md").write_text("```calc\nb = 2\n```\n", "utf-8")
    editor.edit("a.md", text + "\nProse.\n")
    assert editor.analysis("a.md").values[-1].display == "2"


def test_open_documents_count_their_changes_and_the_overlay_follows_them(tmp_path: Path) -> None:
    documents = OpenDocuments()
    texts = OpenTexts(documents)
    uri = (tmp_path / "a.md").as_uri()
    with pytest.raises(KeyError):
        texts[str(tmp_path / "a.md")]
    documents[uri] = Document(uri, 1, "one")
    assert documents.generation == 1 and texts[str(tmp_path / "a.md")] == "one"
    documents[uri] = Document(uri, 2, "two")
    assert documents.generation == 2 and texts[str(tmp_path / "a.md")] == "two"
    del documents[uri]
    assert documents.generation == 3 and str(tmp_path / "a.md") not in texts and list(texts) == []
