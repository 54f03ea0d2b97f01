"""SARIF 2.1.0 output of ``margin check``, for code-scanning dashboards.

The log validates against the OASIS schema (``tests/schemas/sarif-schema-2.1.0.json``):

* artifact URIs are percent-encoded relative references (RFC 3986: every
  character but the unreserved ones and ``/`` is encoded) resolved against
  ``%SRCROOT%``, which ``run.originalUriBaseIds`` maps to the project root as a
  ``file:`` URI with a trailing slash; a file outside the root gets an absolute
  ``file:`` URI;
* every code of the catalogue is a rule (``tool.driver.rules``) with a link to
  its section of ``docs/diagnostics.md``; results point at it by ``ruleIndex``;
* notes are appended to the message, related spans become
  ``relatedLocations`` and quick fixes ``fixes``;
* ``partialFingerprints`` hash what the finding is (code, file, flagged text,
  its line's text, an ordinal among identical findings) and no line numbers,
  so a finding keeps its fingerprint when lines are inserted above it.

Columns count code points (``columnKind: unicodeCodePoints``).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import unicodedata
from typing import Any
from urllib.parse import quote

import scaling_core
from scaling_core import CODES, Diagnostic, DocumentAnalysis, Severity
from scaling_core.render import location
from scaling_core.text import Span
from server.escaping import json_text

#: Where the diagnostic codes are documented; each rule's ``helpUri`` is this plus the code's anchor.
DOCS_URL = "https://github.com/margin-check/margin/blob/main/docs/diagnostics.md"
#: The project's home page (``tool.driver.informationUri``).
HOME_URL = DOCS_URL.split("/blob/", 1)[0]
#: The ``$schema`` of the log: the OASIS errata 01 schema this module is tested against.
SCHEMA_URL = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: The base id of relative artifact URIs (the project root).
SRCROOT = "%SRCROOT%"
#: The key of ``partialFingerprints`` (versioned: a new way of hashing gets a new key).
FINGERPRINT_KEY = "marginFinding/v1"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note", Severity.HINT: "note"}

#: Headings of docs/diagnostics.md that do not read ``CODE — catalogue title (severity)``.
#: tests/cli/test_formats.py checks every anchor against the headings, so a stale entry fails there.
_HEADING_TITLES = {"U005": "claim matches only with a prefix the author did not write"}


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    kept = "".join(ch for ch in heading.strip().lower() if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def rule_help_uri(code: str) -> str:
    """The link to a code's section of docs/diagnostics.md (``…/diagnostics.md#c001--check-failed-error``)."""
    info = CODES[code]
    title = _HEADING_TITLES.get(code, info.title)
    return f"{DOCS_URL}#{github_anchor(f'{code} — {title} ({info.severity.label})')}"


def artifact_location(path: str, root: str) -> dict[str, Any]:
    """A path as a SARIF ``artifactLocation``: relative to ``%SRCROOT%`` inside ``root``, else a ``file:`` URI.

    ``root`` is an absolute POSIX path; ``urllib.parse.unquote`` of a relative
    ``uri`` gives the path back.
    """
    relative = None
    if posixpath.isabs(path):
        normal = posixpath.normpath(path)
        if normal != root and normal.startswith(root.rstrip("/") + "/"):
            relative = posixpath.relpath(normal, root)
    else:
        normal = posixpath.normpath(path)
        if normal != ".." and not normal.startswith("../"):
            relative = normal
        else:
            normal = posixpath.normpath(posixpath.join(root, path))
    if relative is not None:
        return {"uri": _encode(relative), "uriBaseId": SRCROOT}
    return {"uri": "file://" + _encode(normal)}


def _encode(path: str) -> str:
    """Percent-encode all but RFC 3986's unreserved characters and ``/`` (undecodable bytes as they were)."""
    return quote(path, safe="/", errors="surrogateescape")


def _root_uri(root: str) -> str:
    return "file://" + _encode(root.rstrip("/") + "/")


def _region(analysis: DocumentAnalysis, span: Span) -> dict[str, Any]:
    line, column, end_line, end_column = location(analysis.index, span)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def fingerprints(analysis: DocumentAnalysis, path: str) -> list[str]:
    """One fingerprint per diagnostic of ``analysis`` (same order), free of line and column numbers.

    It hashes the code, the path, the flagged text, the whitespace-normalised
    text of the line it starts on and its ordinal among findings with all of
    these equal (in document order).
    """
    seen: dict[tuple[str, ...], int] = {}
    keys: dict[int, str] = {}
    order = sorted(range(len(analysis.diagnostics)), key=lambda i: (analysis.diagnostics[i].span.start, i))
    for i in order:
        d = analysis.diagnostics[i]
        line = analysis.index.line_text(analysis.index.position(d.span.start)[0])
        parts = (d.code, path, analysis.text[d.span.start : d.span.end], " ".join(line.split()))
        seen[parts] = ordinal = seen.get(parts, 0) + 1
        data = "\0".join((*parts, str(ordinal))).encode("utf-8", "surrogatepass")
        keys[i] = hashlib.sha256(data).hexdigest()[:32]
    return [keys[i] for i in range(len(analysis.diagnostics))]


def _message(d: Diagnostic) -> str:
    return "\n".join([d.message, *(f"note: {note}" for note in d.notes)])


def _result(
    analysis: DocumentAnalysis, d: Diagnostic, where: dict[str, Any], fingerprint: str, rule_index: dict[str, int]
) -> dict[str, Any]:
    result = {
        "ruleId": d.code, "ruleIndex": rule_index[d.code], "level": LEVELS[d.severity],
        "message": {"text": _message(d)},
        "locations": [{"physicalLocation": {"artifactLocation": where, "region": _region(analysis, d.span)}}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }  # fmt: skip
    if d.related:
        result["relatedLocations"] = [
            {"id": number, "message": {"text": related.message},
             "physicalLocation": {"artifactLocation": where, "region": _region(analysis, related.span)}}
            for number, related in enumerate(d.related, 1)
        ]  # fmt: skip
    if d.fixes:
        result["fixes"] = [
            {"description": {"text": fix.title},
             "artifactChanges": [{"artifactLocation": where, "replacements": [
                 {"deletedRegion": _region(analysis, fix.span), "insertedContent": {"text": fix.text}}]}]}
            for fix in d.fixes
        ]  # fmt: skip
    return result


def rules() -> list[dict[str, Any]]:
    """``tool.driver.rules``: every code of the catalogue, in catalogue order."""
    return [
        {"id": info.code, "shortDescription": {"text": info.title}, "helpUri": rule_help_uri(info.code),
         "defaultConfiguration": {"level": LEVELS[info.severity]}}
        for info in CODES.values()
    ]  # fmt: skip


def sarif_log(
    analyses: list[DocumentAnalysis], paths: list[str], *, root: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """The SARIF 2.1.0 log as Python data; relative paths are relative to ``root`` (default: the current folder)."""
    base = os.path.abspath(os.fspath(root) if root is not None else os.getcwd()).replace(os.sep, "/")
    rule_index = {code: number for number, code in enumerate(CODES)}
    results = []
    for analysis, path in zip(analyses, paths):
        where = artifact_location(path, base)
        for d, fingerprint in zip(analysis.diagnostics, fingerprints(analysis, path)):
            results.append(_result(analysis, d, where, fingerprint, rule_index))
    driver = {
        "name": "margin", "version": scaling_core.__version__, "semanticVersion": scaling_core.__version__,
        "informationUri": HOME_URL, "rules": rules(),
    }  # fmt: skip
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(base)}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URL, "version": "2.1.0", "runs": [run]}


def to_sarif(analyses: list[DocumentAnalysis], paths: list[str], *, root: str | os.PathLike[str] | None = None) -> str:
    """SARIF 2.1.0 as JSON text (see :func:`sarif_log`)."""
    return json_text(sarif_log(analyses, paths, root=root))
