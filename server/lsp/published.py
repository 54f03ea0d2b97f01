"""``textDocument/publishDiagnostics`` notifications, made as JSON in the analysis thread.

Each version of a draft is published whole, and most of its diagnostics are
what the last version published: a keystroke on one line leaves every other
diagnostic at the same line and column.  Turning a diagnostic into the
protocol's JSON (positions, lsprotocol's objects, its converter, ``json.dumps``)
cost ~20 µs; a draft with ~400 failing checks paid ~8 ms for it per keystroke.
:class:`DiagnosticsJson` keeps, per document, each diagnostic's JSON under
what it is made from (its code, message, notes, severity, and its range and
related locations as lines and columns), and makes again only what changed.
The JSON is exactly lsprotocol's (``tests/lsp/test_publish_off_loop.py``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:  # the engine loads after ``initialize`` is answered (``server.py``)
    from scaling_core import Diagnostic
    from server.lsp.convert import PositionConverter

#: A diagnostic's JSON is made from this: (code, message, notes, severity, range, related ranges and messages).
_Key = tuple[Any, ...]


class DiagnosticsJson:
    """The JSON of each document's last published diagnostics, to make the next version's from."""

    def __init__(self, unstructure: Callable[[object], Any]) -> None:
        #: lsprotocol's converter (pygls's): an LSP object as plain JSON values.
        self._unstructure = unstructure
        self._made: dict[str, dict[_Key, str]] = {}
        self._lock = threading.Lock()

    def notification(
        self,
        uri: str,
        version: int | None,
        converter: PositionConverter,
        items: Sequence[Diagnostic],
        extra: Sequence[types.Diagnostic] = (),
    ) -> str:
        """The body of the notification publishing ``items`` (then the LSP diagnostics ``extra``) for ``uri``."""
        from server.lsp.convert import diagnostic

        with self._lock:
            before = self._made.get(uri, {})
        made: dict[_Key, str] = {}
        parts = []
        for item in items:
            key = _key(converter, item)
            found = made.get(key) or before.get(key)
            if found is None:
                found = json.dumps(self._unstructure(diagnostic(converter, uri, item)))
            made[key] = found
            parts.append(found)
        parts += [json.dumps(self._unstructure(item)) for item in extra]
        with self._lock:
            self._made[uri] = made
        params = f'{{"uri": {json.dumps(uri)}, "diagnostics": [{", ".join(parts)}], "version": {json.dumps(version)}}}'
        return f'{{"method": "{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}", "jsonrpc": "2.0", "params": {params}}}'

    def forget(self, uri: str) -> None:
        """A document closed: drop what its versions made."""
        with self._lock:
            self._made.pop(uri, None)


def _key(converter: PositionConverter, item: Diagnostic) -> _Key:
    """Everything ``convert.diagnostic`` makes the LSP diagnostic of ``item`` from (its document's URI aside)."""
    span = item.span
    related = tuple((converter.units(r.span.start), converter.units(r.span.end), r.message) for r in item.related)
    where = (converter.units(span.start), converter.units(span.end))
    return item.code, item.message, item.notes, item.severity, where, related
