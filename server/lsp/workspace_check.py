"""``workspace/diagnostic``: every draft under the workspace root, checked as ``margin check`` would.

Open drafts are checked as edited; the others as on disk, read as ``margin check``
reads them.  Nothing is skipped silently: a folder the walk could not list, and a
file that could not be opened or decoded, gets a report of its own (the folder's
or the file's URI) holding one warning at its start that says why, as
``margin check`` warns about it (docs/editors.md, "Workspace diagnostics").

Loaded with the engine (:func:`server.lsp.features.load_engine`), never at start-up.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from scaling_core.queries.coverage import document_coverage
from server.lsp.documents import Document
from server.lsp.server import MarginServer
from server.workspace import DraftDecodeError, Project, Skipped, discover, read_draft

_START = types.Range(types.Position(0, 0), types.Position(0, 0))


async def check_workspace(
    ls: MarginServer, token: types.ProgressToken | None
) -> list[types.WorkspaceDocumentDiagnosticReport]:
    """Every draft of the workspace (open ones as edited), with ``$/progress`` reports; then a
    report with one warning for each path that could not be read."""
    root = ls.state.root
    if root is None:
        return []
    skipped: list[Skipped] = []
    files = discover([root], Project(root, ls.state.config, None), skipped=skipped)
    window = ls.client_capabilities.window
    if token is None and window is not None and window.work_done_progress:
        token = f"margin-workspace-{id(files)}"
        try:
            await ls.work_done_progress.create_async(token)
        except Exception:  # noqa: BLE001 - progress is optional; the check still runs
            token = None
    if token is not None:
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin("Margin: checking the workspace", percentage=0))
    reports: list[types.WorkspaceDocumentDiagnosticReport] = []
    loop = asyncio.get_running_loop()
    try:
        for number, path in enumerate(files, start=1):
            uri = path.resolve().as_uri()
            document = ls.state.documents.get(uri)
            if document is None:
                try:
                    document = Document(uri, 0, read_draft(path).text)
                except (OSError, DraftDecodeError) as error:
                    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
                    skipped.append(Skipped(path, f"cannot read it: {reason}"))
                    continue
            analysis = await loop.run_in_executor(None, ls.state.analyze_safely, document)
            coverage = None
            if ls.state.config.coverage_diagnostics:
                coverage = await loop.run_in_executor(None, document_coverage, analysis)
            items = ls.diagnostics_for(document, analysis, coverage)
            version = document.version if uri in ls.state.documents else None
            reports.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=items, version=version))
            if token is not None:
                ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{number}/{len(files)} {path.name}", percentage=int(100 * number / len(files))))  # fmt: skip
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=_summary(len(reports), len(skipped))))
    return reports + [_skipped_report(skip, root) for skip in skipped]


def _skipped_report(skip: Skipped, root: Path) -> types.WorkspaceFullDocumentDiagnosticReport:
    """A path that could not be read: its own report (a folder's URI for a folder), one warning at its start."""
    path = skip.path.resolve()
    try:
        shown = path.relative_to(root.resolve()).as_posix()
    except ValueError:
        shown = path.as_posix()
    what = "the drafts in it are not checked" if skip.reason.startswith("cannot read the folder") else "not checked"
    message = f"{shown}: skipped, {skip.reason}; {what}"
    warning = types.Diagnostic(_START, message, severity=types.DiagnosticSeverity.Warning, source="margin")
    return types.WorkspaceFullDocumentDiagnosticReport(uri=path.as_uri(), items=[warning], version=None)


def _summary(checked: int, skipped: int) -> str:
    return f"{checked} drafts checked" + (f", {skipped} paths skipped (unreadable)" if skipped else "")
