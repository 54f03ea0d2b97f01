"""Reading LSP messages from a byte stream, never going deaf on a broken frame.

pygls's reader trusts every frame: after a wrong ``Content-Length`` it waits
forever, a huge one exhausts memory, and a message whose params do not fit
their type gets no answer.  This reader replaces it:

* Headers are ``Name: value`` lines ending in CRLF (LF alone is accepted too),
  then an empty line; ``Content-Length`` is matched in any case.
* A frame that cannot be read (no or a bad ``Content-Length``, a line that is
  not a header, a body that is not JSON) is logged and skipped: the reader
  looks for the next ``Content-Length:`` in the stream, also inside the bytes
  the broken frame claimed, and carries on from there.
* A ``Content-Length`` over :data:`MAX_MESSAGE_BYTES` is refused the same way,
  without reading the body into memory.
* A request whose params do not fit its method is answered ``-32602``
  (invalid params); a notification is logged and handed to
  :meth:`MarginProtocol.invalid_notification` (a broken ``didChange`` must not
  leave the server's text different from the editor's).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from cattrs import transform_error
from lsprotocol import types

from server.lsp.long_message import LONG_BODY_BYTES, decode_long_body
from server.lsp.traffic import EditorTraffic

log = logging.getLogger(__name__)

#: How long messages already read are dispatched before the event loop gets a turn (seconds).
TURN_SECONDS = 0.005
#: The largest message body read (bytes): a 50 MB draft fits, escaped as JSON.
MAX_MESSAGE_BYTES = 128 * 1024 * 1024
#: The longest header block (bytes) before the reader gives up on it.
MAX_HEADER_BYTES = 8 * 1024
_CHUNK = 64 * 1024
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_HEADER_LINE = re.compile(rb"([!#-'*+.0-9A-Z^-z|~-]+)[ \t]*:[ \t]*(.*?)[ \t]*")
_LENGTH_NAME = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
#: Bytes kept while scanning, so a ``Content-Length:`` split between two reads is still found.
_KEEP = len(b"content-length \t:")


class Dispatcher(Protocol):
    """What the reader hands messages to (:class:`server.lsp.server.MarginProtocol`)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The typed message of a JSON object (raises on invalid params)."""

    def handle_message(self, message: Any) -> None:
        """Act on one typed message."""

    def reject_request(self, msg_id: object, code: int, message: str) -> None:
        """Answer a request with an error."""

    def invalid_notification(self, method: str, params: object, reason: str) -> None:
        """A notification whose params could not be read."""

    def invalid_response(self, msg_id: object, reason: str) -> None:
        """A response (to a request of ours) that could not be read."""


class FrameReader:
    """Message bodies from a stream of byte chunks (``read()`` returns b"" at the end)."""

    def __init__(self, read: Callable[[], Awaitable[bytes]], limit: int = MAX_MESSAGE_BYTES) -> None:
        self._read = read
        self._buffer = bytearray()
        self._eof = False
        self.limit = limit
        #: Frames skipped because they could not be read (for tests and logs).
        self.skipped = 0

    async def _more(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def next_body(self) -> bytes | None:
        """The next message body; None at the end of the stream."""
        while True:
            match = _HEADER_END.search(self._buffer, 0, MAX_HEADER_BYTES + 4)
            if match is None:
                if len(self._buffer) > MAX_HEADER_BYTES:
                    await self._skip("no end of headers within %d bytes" % MAX_HEADER_BYTES)
                elif not await self._more():
                    return None
                continue
            length, problem = _content_length(bytes(self._buffer[: match.start()]), self.limit)
            if length is None:
                await self._skip(problem)
                continue
            end = match.end() + length
            while len(self._buffer) < end:
                if not await self._more():
                    return None
            with memoryview(self._buffer) as view:  # one copy (a slice of the bytearray would be another)
                body = bytes(view[match.end() : end])
            del self._buffer[:end]
            return body

    def reread(self, body: bytes, why: str) -> None:
        """``body`` was not a message: look for the next header inside it (a ``Content-Length`` too long)."""
        self.skipped += 1
        log.error("margin: skipped a message that could not be read (%s); reading on from the next header", why)
        found = _LENGTH_NAME.search(body, 1)
        if found is not None:
            self._buffer[:0] = body[found.start() :]

    async def _skip(self, why: str) -> None:
        """Drop bytes up to the next ``Content-Length:`` (not the one at the very start)."""
        self.skipped += 1
        log.error("margin: skipped a frame that could not be read (%s); reading on from the next header", why)
        start = 1
        while True:
            found = _LENGTH_NAME.search(self._buffer, start)
            if found is not None:
                del self._buffer[: found.start()]
                return
            keep = max(len(self._buffer) - _KEEP, start)
            del self._buffer[:keep]
            start = 0
            if not await self._more():
                return


def _content_length(block: bytes, limit: int) -> tuple[int | None, str]:
    """The body length a header block gives, or None and what is wrong with it."""
    length: int | None = None
    for line in re.split(rb"\r?\n", block):
        header = _HEADER_LINE.fullmatch(line)
        if header is None:
            return None, f"not a header line: {line[:60]!r}"
        if header.group(1).lower() == b"content-length":
            if not header.group(2).isdigit():
                return None, f"Content-Length is not a number: {header.group(2)[:30]!r}"
            length = int(header.group(2))
    if length is None:
        return None, "no Content-Length header"
    if length > limit:
        return None, f"message of {length} bytes is over the limit of {limit}"
    return length, ""


def dispatch(protocol: Dispatcher, body: bytes, frames: FrameReader) -> None:
    """Decode one body and hand it on; answer what cannot be handled."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, UnicodeDecodeError, too deep
        frames.reread(body, f"not JSON: {error}")
        return
    dispatch_decoded(protocol, data, body)


async def dispatch_long(protocol: Dispatcher, body: bytes, frames: FrameReader) -> None:
    """:func:`dispatch` for a long body, decoded in a thread a slice at a time (``long_message.py``): the event
    loop runs meanwhile, and the next message waits for this one."""
    try:
        data = await asyncio.get_running_loop().run_in_executor(None, decode_long_body, body)
    except (ValueError, RecursionError) as error:
        frames.reread(body, f"not JSON: {error}")
        return
    dispatch_decoded(protocol, data, body)


def dispatch_decoded(protocol: Dispatcher, data: Any, body: bytes) -> None:
    """Hand on the JSON value of one body; answer what cannot be handled."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        log.error("margin: ignored a message that is not a JSON-RPC 2.0 object: %.200s", body)
        if isinstance(data, dict) and isinstance(data.get("id"), (int, str)) and "method" in data:
            protocol.reject_request(data["id"], types.ErrorCodes.InvalidRequest, "not a JSON-RPC 2.0 request")
        return
    try:
        message = protocol.structure_message(data)
    except Exception as error:  # noqa: BLE001 - pygls raises JsonRpcInvalidParams (or another) for any bad field
        _invalid(protocol, data, error)
        return
    try:
        protocol.handle_message(message)
    except Exception:  # noqa: BLE001 - logged; the server keeps reading
        log.exception("margin: failed to handle %s", data.get("method", "a response"))


def _invalid(protocol: Dispatcher, data: dict[str, Any], error: Exception) -> None:
    method = str(data.get("method", ""))
    reason = _reason(error)
    log.error("margin: invalid params for %s: %s", method or "a response", reason)
    if "method" not in data:  # a response from the client: whoever waits on it gets the error
        if isinstance(data.get("id"), (int, str)):
            protocol.invalid_response(data["id"], reason)
        return
    if "id" in data:
        if isinstance(data["id"], (int, str)):
            protocol.reject_request(
                data["id"], types.ErrorCodes.InvalidParams, f"invalid params for {method}: {reason}"
            )
        return
    protocol.invalid_notification(method, data.get("params"), reason)


def _reason(error: BaseException) -> str:
    """A one-line description of why a message could not be read (cattrs lists each bad field)."""
    cause = error.__cause__ or error
    try:
        return "; ".join(transform_error(cause, path="$")) or str(cause)
    except Exception:  # noqa: BLE001 - not a cattrs error: its own text
        return str(cause) or type(cause).__name__


def threaded_reader(stream: Any, traffic: EditorTraffic | None = None) -> Callable[[], Awaitable[bytes]]:
    """Chunks of a blocking binary stream, read in a daemon thread (so exiting never waits on stdin).

    ``traffic`` counts each chunk when read, and as dispatched when the next is asked for (the reader of
    :func:`serve` asks only once every message of what it had was dispatched).
    """
    chunks: asyncio.Queue[bytes] | None = None
    started = False
    handed = False

    def pump(loop: asyncio.AbstractEventLoop, into: asyncio.Queue[bytes]) -> None:
        # The file descriptor, not the buffered stream: a daemon thread blocked inside a
        # BufferedReader holds its lock, and the interpreter aborts on it at exit.
        try:
            descriptor = stream.fileno()
            reader: Callable[[int], bytes] = functools.partial(os.read, descriptor)
        except (AttributeError, OSError, ValueError):
            reader = getattr(stream, "read1", stream.read)
        while True:
            try:
                chunk = reader(_CHUNK)
            except (OSError, ValueError):
                chunk = b""
            if traffic is not None:
                traffic.chunk_read()
            loop.call_soon_threadsafe(into.put_nowait, chunk)
            if not chunk:
                return

    async def read() -> bytes:
        nonlocal chunks, started, handed
        if handed and traffic is not None:
            traffic.chunk_dispatched()  # the chunk handed last time: its messages are all dispatched
        if chunks is None:
            chunks = asyncio.Queue()
        if not started:
            started = True
            args = (asyncio.get_running_loop(), chunks)
            threading.Thread(target=pump, args=args, name="margin-stdin", daemon=True).start()
        chunk = await chunks.get()
        handed = True
        return chunk

    return read


async def serve(protocol: Dispatcher, read: Callable[[], Awaitable[bytes]], stop: threading.Event) -> None:
    """Read and dispatch messages until the stream ends or ``stop`` is set.

    Messages already read are dispatched without waiting, so a burst (a
    thousand keystrokes sent at once: 200 ms of ``didChange`` in a 20 MB
    draft) would be one event-loop turn; every :data:`TURN_SECONDS` the loop
    gets a turn for its other work (replies, timers, finished analyses).
    A long body (a big draft opened) is decoded off the loop (:func:`dispatch_long`).
    """
    frames = FrameReader(read)
    loop = asyncio.get_running_loop()
    since = loop.time()
    while not stop.is_set():
        body = await frames.next_body()
        if body is None:
            return
        if len(body) >= LONG_BODY_BYTES:
            await dispatch_long(protocol, body, frames)
        else:
            dispatch(protocol, body, frames)
        if loop.time() - since > TURN_SECONDS:
            await asyncio.sleep(0)
            since = loop.time()
