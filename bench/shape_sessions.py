"""Editing sessions on each draft shape of ``shapes.py``, driven like an editor over stdio.

Every figure is seen from the client: the time from sending a ``didChange``
to having read the ``publishDiagnostics`` of that version (its JSON parsed;
not pygls's conversion of it into lsprotocol's objects, which an editor does
not do: ~6-8 ms for ~400 diagnostics, more than the editor's own handling).
The server samples its own event-loop lag (``MARGIN_LOOP_MONITOR=1``).
``bench_server.py`` prints the table.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pytest_lsp import client_capabilities

from bench import shapes
from server.lsp.scheduling import QUIET_AFTER_S

TEXT = "the quick brown fox jumps over the lazy dog "
#: A claim added at the end of a line, then a name typed into it (before `` -->``), a character a keystroke.
CLAIM, NAME = " 7<!-- =  -->", "chips_per_pod_slice_"


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile of ``samples`` (nearest rank)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Editor:
    """A stdio client that remembers when each document's diagnostics arrived."""

    def __init__(self) -> None:
        self.lsp = LanguageClient("margin-bench", "1")
        #: (uri, version) -> when it was published; uri -> publish times.
        self.versions: dict[tuple[str, int], float] = {}
        self.times: dict[str, list[float]] = {}
        self.changed = asyncio.Event()

        #: When each (uri, version)'s diagnostics were read, before pygls turned them into objects.
        self._read: dict[tuple[str, int], float] = {}
        structure = self.lsp.protocol.structure_message

        def read(data: dict[str, Any]) -> object:  # called for each JSON object, the whole message last
            if data.get("method") == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and "jsonrpc" in data:
                params = data.get("params") or {}
                self._read[(params.get("uri"), params.get("version") or 0)] = time.perf_counter()
            return structure(data)

        self.lsp.protocol.structure_message = read  # type: ignore[method-assign]

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version or 0)
            now = self._read.pop(key, None) or time.perf_counter()
            self.versions[key] = now
            self.times.setdefault(params.uri, []).append(now)
            self.changed.set()

        @self.lsp.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[object]:
            return [None for _ in params.items]

    async def start(self, root: Path | None = None) -> None:
        os.environ["MARGIN_LOOP_MONITOR"] = "1"
        await self.lsp.start_io(sys.executable, "-m", "server", "lsp")
        await self.lsp.initialize_async(
            types.InitializeParams(
                capabilities=client_capabilities("visual_studio_code"),
                root_uri=root.as_uri() if root is not None else None,
            )
        )
        self.lsp.initialized(types.InitializedParams())

    async def until(self, condition, timeout: float = 600.0) -> None:  # type: ignore[no-untyped-def]
        """Wait until ``condition()`` holds, checking after each publish."""
        deadline = time.perf_counter() + timeout
        while not condition():
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(0.01, deadline - time.perf_counter()))

    async def published(self, uri: str, version: int, timeout: float = 600.0) -> float:
        """When ``uri`` at ``version`` was published (waits for it)."""
        await self.until(lambda: (uri, version) in self.versions, timeout)
        return self.versions[(uri, version)]

    def open(self, uri: str, text: str) -> None:
        self.lsp.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, text))
        )

    def change(self, uri: str, version: int, line: int, column: int, end_column: int, text: str) -> None:
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, column), types.Position(line, end_column)), text=text
        )
        self.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
        )

    def rss_mb(self, field: str = "VmRSS") -> float:
        """The server's resident memory now (``VmHWM``: its peak so far)."""
        pid = self.lsp._server.pid  # type: ignore[attr-defined]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def settled_rss_mb(self, quiet_s: float = 0.5, limit_s: float = 5.0) -> tuple[float, float]:
        """The server's resident memory once it stops falling (no new low for ``quiet_s``; at most ``limit_s``)
        and how long that took: a long draft's replaced analysis is freed in the background after the new one
        is published, and the memory handed back then (``collector.release_in_background``)."""
        began = time.perf_counter()
        lowest, since = self.rss_mb(), began
        while (now := time.perf_counter()) - since < quiet_s and now - began < limit_s:
            await asyncio.sleep(0.05)
            if (rss := self.rss_mb()) < lowest:
                lowest, since = rss, time.perf_counter()
        return lowest, since - began

    async def loop_max_ms(self, reset: bool = False) -> float:
        """The longest event-loop turn so far (since the last reset); ``reset`` starts the figure over."""
        stats = await self.lsp.protocol.send_request_async("margin/serverStats", {"resetLoop": reset})
        return float(stats.loop.max_lag_ms) if stats.loop else float("nan")

    async def stop(self) -> None:
        await self.lsp.shutdown_async(None)
        self.lsp.exit(None)
        await self.lsp.stop()

    def kill(self) -> None:
        """End the server if it is still running (a session that failed or was abandoned)."""
        server = getattr(self.lsp, "_server", None)
        if server is not None and server.returncode is None:
            server.kill()


@dataclass
class Row:
    """One shape's figures (milliseconds unless named otherwise)."""

    shape: str
    lines: int = 0
    first_s: float = float("nan")
    edits: dict[str, list[float]] = field(default_factory=dict)
    requests: dict[str, list[float]] = field(default_factory=dict)
    loop_max: float = float("nan")
    rss_open: float = float("nan")
    rss_after: float = float("nan")
    rss_peak: float = float("nan")
    rss_edits: int = 0
    notes: list[str] = field(default_factory=list)


class Session:
    """One open draft being edited: its rows, its version, the plan of where edits go."""

    def __init__(self, editor: Editor, uri: str, text: str) -> None:
        self.editor, self.uri = editor, uri
        self.rows = text.split("\n")
        self.version = 1
        self.rng = random.Random(7)

    async def digit(self, line: int, column: int) -> float:
        """Change the digit at (line, column) to another digit: seconds to its diagnostics."""
        old = self.rows[line][column]
        new = str((int(old) + self.rng.randint(1, 8)) % 10) if old.isdigit() else "1"
        if column == 0 or not self.rows[line][column - 1].isdigit():
            new = new if new != "0" else "3"  # no leading zero
        self.rows[line] = self.rows[line][:column] + new + self.rows[line][column + 1 :]
        return await self._send(line, column, column + 1, new)

    async def type(self, line: int, column: int, count: int) -> float:
        """Type one character at (line, column + count): seconds to its diagnostics."""
        character = TEXT[count % len(TEXT)]
        at = min(column + count, len(self.rows[line]))
        self.rows[line] = self.rows[line][:at] + character + self.rows[line][at:]
        return await self._send(line, at, at, character)

    async def name_in_claim(self, line: int, count: int) -> float:
        """Type the ``count``-th character of a name into a claim at the end of ``line`` (the claim is added,
        untimed, before the first): seconds to its diagnostics.  Each keystroke makes a new unknown name."""
        if count == 0:
            end = len(self.rows[line])
            self.rows[line] += CLAIM
            await self._send(line, end, end, CLAIM)
        at = len(self.rows[line]) - len(" -->")
        character = NAME[count % len(NAME)]
        self.rows[line] = self.rows[line][:at] + character + self.rows[line][at:]
        return await self._send(line, at, at, character)

    async def restore(self, line: int, text: str) -> None:
        """Put ``text`` back as ``line`` (untimed)."""
        old, self.rows[line] = self.rows[line], text
        await self._send(line, 0, len(old), text)

    async def _send(self, line: int, start: int, end: int, text: str) -> float:
        self.version += 1
        began = time.perf_counter()
        self.editor.change(self.uri, self.version, line, start, end, text)
        return await self.editor.published(self.uri, self.version) - began


async def shape_session(name: str, text: str, edits: int, requests: int, rss_edits: int) -> Row:
    """Open ``text``, edit it as the plan says, ask hover/inlay/completion, type ``rss_edits`` characters."""
    editor = Editor()
    try:
        return await _shape_session(editor, name, text, edits, requests, rss_edits)
    finally:
        editor.kill()


async def _shape_session(editor: Editor, name: str, text: str, edits: int, requests: int, rss_edits: int) -> Row:
    row = Row(name, text.count("\n"))
    folder = Path(tempfile.mkdtemp(prefix="margin-bench-"))
    uri = (folder / f"{name}.md").as_uri()
    await editor.start()
    began = time.perf_counter()
    editor.open(uri, text)
    row.first_s = await editor.published(uri, 1) - began
    row.rss_open = editor.rss_mb()
    session = Session(editor, uri, text)
    where_to = shapes.plan(text)
    for where, (line, column) in where_to.digits.items():
        row.edits[f"digit {where}"] = [await session.digit(line, column) * 1e3 for _ in range(edits)]
    for where, (line, column) in where_to.typing.items():
        row.edits[f"typing {where}"] = [await session.type(line, column, n) * 1e3 for n in range(edits)]
    line, column = where_to.typing["middle"]
    before = session.rows[line]
    row.edits["a name typed in a claim"] = [await session.name_in_claim(line, n) * 1e3 for n in range(edits)]
    await session.restore(line, before)
    row.edits["typing after a pause"] = await _after_pauses(session, line, column + edits, edits)
    await _requests(editor, uri, session.rows, requests, row)
    await _after_edits(session, line, column + 2 * edits, requests, row)
    row.rss_open = editor.rss_mb()  # after the first hover's derivation imported SymPy: typing alone from here
    for n in range(rss_edits):
        await session.type(line, column, edits + n)
    row.rss_edits = rss_edits
    row.rss_after, row.rss_peak = editor.rss_mb(), editor.rss_mb("VmHWM")
    row.loop_max = await editor.loop_max_ms()
    await editor.stop()
    return row


async def _after_pauses(session: Session, line: int, column: int, count: int) -> list[float]:
    """Keystrokes each 0.2-0.3 s after the last publish (ms to diagnostics): the server prepares what hovers and
    lenses read once a draft is quiet for ``QUIET_AFTER_S`` (0.2 s), so each lands while it does, and its
    analysis waits until the preparation stops."""
    rng, found = random.Random(11), []
    for n in range(count):
        await asyncio.sleep(QUIET_AFTER_S + rng.random() * 0.1)
        found.append(await session.type(line, column, n) * 1e3)
    return found


async def _requests(editor: Editor, uri: str, rows: list[str], count: int, row: Row) -> None:
    doc = types.TextDocumentIdentifier(uri)
    lines = [i for i, text in enumerate(rows) if " = " in text and not text.startswith(("#", "`", "<"))]
    rng = random.Random(3)
    timings: dict[str, list[float]] = {"hover": [], "inlay": [], "completion": []}
    for _ in range(count):
        line = rng.choice(lines)
        start = time.perf_counter()
        await editor.lsp.text_document_hover_async(types.HoverParams(doc, types.Position(line, 1)))
        timings["hover"].append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        window = types.Range(types.Position(line, 0), types.Position(line + 60, 0))
        await editor.lsp.text_document_inlay_hint_async(types.InlayHintParams(doc, window))
        timings["inlay"].append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        await editor.lsp.text_document_completion_async(types.CompletionParams(doc, types.Position(line, 4)))
        timings["completion"].append((time.perf_counter() - start) * 1e3)
    row.requests = timings


async def huge_session(size: int, burst: int) -> Row:
    """A ``size``-character draft: first diagnostics, one keystroke, then a burst of ``burst`` keystrokes."""
    editor = Editor()
    try:
        return await _huge_session(editor, size, burst)
    finally:
        editor.kill()


async def _huge_session(editor: Editor, size: int, burst: int) -> Row:
    text = shapes.huge(size)
    row = Row(f"huge {len(text) / 1e6:.0f} MB", text.count("\n"))
    uri = (Path(tempfile.mkdtemp(prefix="margin-bench-")) / "huge.md").as_uri()
    await editor.start()
    began = time.perf_counter()
    editor.open(uri, text)
    row.first_s = await editor.published(uri, 1) - began
    row.rss_open = editor.rss_mb()
    opening = await editor.loop_max_ms(reset=True)  # the loop max column then shows typing alone
    row.notes.append(f"longest event-loop turn while opening it (its message decoded off the loop): {opening:.0f} ms")
    session = Session(editor, uri, text)
    line, column = shapes.plan(text[:200_000]).typing["top"]
    row.edits["keystroke"] = [await session.type(line, column, 0) * 1e3]
    began = time.perf_counter()
    for n in range(burst):
        character = TEXT[n % len(TEXT)]
        at = min(column + 1 + n, len(session.rows[line]))
        session.rows[line] = session.rows[line][:at] + character + session.rows[line][at:]
        session.version += 1
        editor.change(uri, session.version, line, at, at, character)
    await editor.published(uri, session.version)
    row.edits[f"burst of {burst}"] = [(time.perf_counter() - began) * 1e3]
    row.rss_after, row.rss_edits, row.rss_peak = editor.rss_mb(), burst + 1, editor.rss_mb("VmHWM")
    row.loop_max = await editor.loop_max_ms()
    settled, after = await editor.settled_rss_mb()
    row.notes.append(
        f"RSS once the replaced analysis is freed ({after:.1f} s after the last diagnostics): {settled:.0f} MB"
    )
    await editor.stop()
    return row


#: How long the author pauses before the second kind of hover (the server prepares hovers after 0.2 s quiet).
PAUSE_S = 0.3


async def _after_edits(session: Session, line: int, column: int, count: int, row: Row) -> None:
    """A hover on a definition, the inlay hints of 60 lines around one, a completion in one, and the code
    lenses, each just after a keystroke (VS Code asks for inlay hints after each, and for completions as the
    author types) and, hover and lenses, after a pause (a new analysis each time).

    Both may need the draft's coverage, computed once per analysis: the
    hover/inlay/completion figures above ask of one analysis again and again.
    """
    doc = types.TextDocumentIdentifier(session.uri)
    definitions = [i for i, text in enumerate(session.rows) if " = " in text and not text.startswith(("#", "`", "<"))]
    rng = random.Random(5)
    lsp = session.editor.lsp

    def hover() -> Awaitable[object]:
        return lsp.text_document_hover_async(types.HoverParams(doc, types.Position(rng.choice(definitions), 1)))

    def lens() -> Awaitable[object]:
        return lsp.text_document_code_lens_async(types.CodeLensParams(doc))

    def inlay() -> Awaitable[object]:
        line = rng.choice(definitions)
        window = types.Range(types.Position(line, 0), types.Position(line + 60, 0))
        return lsp.text_document_inlay_hint_async(types.InlayHintParams(doc, window))

    def completion() -> Awaitable[object]:
        return lsp.text_document_completion_async(
            types.CompletionParams(doc, types.Position(rng.choice(definitions), 4))
        )

    asks = {
        "hover": (0.0, hover),
        "hover after a 0.3 s pause": (PAUSE_S, hover),
        "inlay hints": (0.0, inlay),
        "completion": (0.0, completion),
        "code lens": (0.0, lens),
        "code lens after a 0.3 s pause": (PAUSE_S, lens),
    }
    timings: dict[str, list[float]] = {kind: [] for kind in asks}
    for n in range(count):
        for number, (kind, (pause, ask)) in enumerate(asks.items()):
            await session.type(line, column, len(asks) * n + number)
            await asyncio.sleep(pause)  # the author stops typing, then moves the mouse (the server prepares)
            start = time.perf_counter()
            await ask()
            timings[kind].append((time.perf_counter() - start) * 1e3)
    row.notes.append(
        "after a keystroke: "
        + ", ".join(
            f"{kind} p50 {percentile(values, 0.5):.1f} ms, p95 {percentile(values, 0.95):.1f} ms"
            for kind, values in timings.items()
        )
        + f" ({count} each)"
    )


async def workspace_session(files: int, edits: int, kind: str = "workspace") -> Row:
    """``files`` open drafts importing one root (or a chain): edit the root, type in a leaf nothing imports."""
    editor = Editor()
    try:
        return await _workspace_session(editor, files, edits, kind)
    finally:
        editor.kill()


async def _workspace_session(editor: Editor, files: int, edits: int, kind: str) -> Row:
    folder = Path(tempfile.mkdtemp(prefix=f"margin-bench-{kind}-"))
    paths = shapes.workspace(folder, files) if kind == "workspace" else shapes.chain(folder, files)
    row = Row(f"{kind} {files} files", sum(p.read_text().count("\n") for p in paths))
    await editor.start(folder)
    uris = [p.as_uri() for p in paths]
    texts = [p.read_text() for p in paths]
    began = time.perf_counter()
    for uri, text in zip(uris, texts):
        editor.open(uri, text)
    await editor.until(lambda: all(editor.times.get(u) for u in uris), 300)
    row.first_s = time.perf_counter() - began
    row.rss_open = editor.rss_mb()
    opening = await editor.loop_max_ms(reset=True)  # the loop max column then shows editing alone
    row.notes.append(f"longest event-loop turn while opening the {files} files: {opening:.0f} ms")
    root = Session(editor, uris[0], texts[0])
    digit_line = next(i for i, r in enumerate(root.rows) if r.startswith(("D = ", "x_0 = ")))
    column = len(root.rows[digit_line]) - 1
    republished, counts = [], []
    for _ in range(edits):
        before = {u: len(editor.times.get(u, [])) for u in uris}
        began = time.perf_counter()
        await root.digit(digit_line, column)
        # Every draft re-published, or none for a second (a chain deeper than the import limit
        # stops reading the root: those drafts are rightly left alone).
        while not all(len(editor.times.get(u, [])) > before[u] for u in uris):
            try:
                await editor.until(lambda b=before: all(len(editor.times.get(u, [])) > b[u] for u in uris), 1.0)
            except (TimeoutError, asyncio.TimeoutError):
                if time.perf_counter() - max(t[-1] for t in editor.times.values()) >= 1.0:
                    break
        again = [u for u in uris if len(editor.times.get(u, [])) > before[u]]
        counts.append(len(again))
        republished.append((max(editor.times[u][-1] for u in again) - began) * 1e3)
    row.edits["root edit, importers re-published"] = republished
    row.notes.append(f"drafts re-published per root edit: {statistics.median(counts):.0f} of {len(uris)}")
    leaf = Session(editor, uris[-1], texts[-1])
    typing_line = next(i for i, r in enumerate(leaf.rows) if r.startswith(("Typing goes", "It is")))
    published = sum(len(editor.times.get(u, [])) for u in uris[:-1])
    row.edits["typing in a leaf"] = [await leaf.type(typing_line, 2, n) * 1e3 for n in range(edits)]
    await asyncio.sleep(1.0)  # let re-analyses the keystrokes started finish
    others = sum(len(editor.times.get(u, [])) for u in uris[:-1]) - published
    row.notes.append(f"other files re-published per leaf keystroke: {others / max(edits, 1):.1f}")
    row.rss_after, row.rss_edits, row.rss_peak = editor.rss_mb(), 2 * edits, editor.rss_mb("VmHWM")
    row.loop_max = await editor.loop_max_ms()
    await editor.stop()
    return row


def format_table(rows: list[Row], header: bool = False) -> str:
    """One table: per shape and edit kind, p50/p95 in ms; then the shape's requests, loop and memory."""

    def ms(value: float) -> str:
        return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"

    out = (
        [
            f"{'shape':<22} {'lines':>7} {'first':>7}  {'edit':<30} {'p50 ms':>8} {'p95 ms':>8}  {'n':>3}  "
            f"{'hover/inlay/compl p95':>22} {'loop max':>9} {'RSS MB before -> after edits, peak':>36}",
            "-" * 160,
        ]
        if header
        else []
    )
    for row in rows:
        requests = "/".join(ms(percentile(v, 0.95)) for v in row.requests.values()) if row.requests else "-"
        rss = f"{row.rss_open:.0f} -> {row.rss_after:.0f} ({row.rss_edits} edits), {row.rss_peak:.0f}"
        for number, (label, samples) in enumerate(row.edits.items()):
            head = f"{row.shape:<22} {row.lines:>7,} {row.first_s:>6.2f}s" if number == 0 else " " * 38
            tail = f"  {requests:>22} {ms(row.loop_max):>9} {rss:>36}" if number == 0 else ""
            out.append(f"{head}  {label:<30} {ms(statistics.median(samples)):>8} "
                       f"{ms(percentile(samples, 0.95)):>8}  {len(samples):>3}{tail}")  # fmt: skip
        if not row.edits:
            out.append(f"{row.shape:<22}")
        out += [" " * 40 + note for note in row.notes]
    return "\n".join(out)
