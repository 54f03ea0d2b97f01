"""A long message is decoded a slice at a time, off the event loop, into exactly what ``json.loads`` gives.

``server/lsp/long_message.py`` cuts long strings between escape sequences and
decodes UTF-8 in slices; here the slices are made a few characters long, so
that every kind of escape, surrogate pair and multi-byte character falls on a
cut somewhere, and the result (or the error) is compared with ``json.loads``.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.lsp import long_message, transport
from server.lsp.long_message import decode_long_body

#: Characters that stress the reader: escapes of every kind, quotes, multi-byte and astral characters.
TRICKY = st.sampled_from(['"', "\\", "\n", "\t", "\x00", "\x1f", "/", "é", "€", "\u2028", "😀", "\U0010ffff", "a"])
TEXTS = st.lists(st.one_of(TRICKY, st.text(max_size=6)), max_size=60).map("".join)
SURROGATES = st.lists(st.sampled_from(["\ud83d", "\ude00", "\udfff", "x"]), max_size=8).map("".join)
#: ``MARGIN_HYPOTHESIS_EXAMPLES`` raises the count, as for the other property tests.
EXAMPLES = int(os.environ.get("MARGIN_HYPOTHESIS_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=EXAMPLES or 300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _outcome(decode: Any, body: bytes) -> tuple[str, Any]:
    try:
        return "value", decode(body)
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return type(error).__name__, str(error)


def _message(text: str, ensure_ascii: bool) -> bytes:
    params = {"textDocument": {"uri": "file:///d.md", "version": 1, "text": text}, "more": [text[:3], {"k": text}]}
    return json.dumps({"jsonrpc": "2.0", "method": "m", "params": params}, ensure_ascii=ensure_ascii).encode()


@SETTINGS
@given(text=TEXTS, surrogates=SURROGATES, ensure_ascii=st.booleans(), slice_size=st.integers(7, 40))
def test_a_long_message_decodes_as_json_loads(
    monkeypatch: pytest.MonkeyPatch, text: str, surrogates: str, ensure_ascii: bool, slice_size: int
) -> None:
    monkeypatch.setattr(long_message, "SLICE", slice_size)
    # Lone surrogates can only be written escaped (a pair of them escaped reads as one astral character).
    body = _message(text + surrogates, True) if ensure_ascii else _message(text, False)
    assert decode_long_body(body) == json.loads(body)


@SETTINGS
@given(
    text=TEXTS, ensure_ascii=st.booleans(), slice_size=st.integers(7, 40),
    where=st.floats(0, 1), junk=st.sampled_from([b"", b"\\", b'"', b"\x01", b"\xff", b"\\u12", b"\\ud83d", b"}"]),
)  # fmt: skip
def test_a_broken_long_message_fails_as_json_loads_fails(
    monkeypatch: pytest.MonkeyPatch, text: str, ensure_ascii: bool, slice_size: int, where: float, junk: bytes
) -> None:
    monkeypatch.setattr(long_message, "SLICE", slice_size)
    body = _message(text, ensure_ascii)
    cut = int(where * len(body))
    broken = body[:cut] + junk + (body[cut:] if junk else b"")  # with no junk: the body cut short
    assert _outcome(decode_long_body, broken) == _outcome(json.loads, broken)


def test_a_long_string_is_read_in_slices_and_dense_escapes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    read = long_message.scanstring

    def counting(text: str, end: int, strict: bool) -> tuple[str, int]:
        value, stop = read(text, end, strict)
        calls.append(stop - end)  # characters read by this call
        return value, stop

    monkeypatch.setattr(long_message, "scanstring", counting)
    monkeypatch.setattr(long_message, "SLICE", 1000)
    prose = 'Line of a draft: a tab\t, a quote ", é, € and 😀 in it.\n' * 200  # ~10,000 characters
    assert decode_long_body(_message(prose, False))["params"]["textDocument"]["text"] == prose
    assert max(calls) <= 1001 and len(calls) >= 20  # both copies of the text read a slice at a time
    calls.clear()
    dense = "é" * 5000  # written as \u00e9 five thousand times: no place to cut near the slice's end
    assert decode_long_body(_message(dense, True))["params"]["textDocument"]["text"] == dense
    assert max(calls) > 20_000  # read at once, as json.loads reads it


def test_strings_ending_at_a_slice_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(long_message, "SLICE", 16)
    for length in range(10, 40):
        for text in ("a" * length, "a" * (length - 2) + "\\n", "\\" * length):
            body = json.dumps({"text": text, "then": ["b" * 20, "", "c"], "last": "d" * 17}).encode()
            assert decode_long_body(body) == json.loads(body)


def test_a_body_json_loads_reads_another_way_is_left_to_it() -> None:
    value = {"jsonrpc": "2.0", "method": "m", "params": {"text": "é" * 50}}
    for body in (json.dumps(value).encode("utf-16"), b"\xef\xbb\xbf" + json.dumps(value).encode()):
        assert _outcome(decode_long_body, body) == _outcome(json.loads, body)


class _Recorder:
    """A dispatcher that records the messages it is handed."""

    def __init__(self) -> None:
        self.handled: list[Any] = []

    def structure_message(self, data: dict[str, Any]) -> Any:
        return data

    def handle_message(self, message: Any) -> None:
        self.handled.append(message)


async def test_long_bodies_are_decoded_off_the_loop_in_order_and_broken_ones_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transport, "LONG_BODY_BYTES", 200)
    threads: list[str] = []

    def decode(body: bytes) -> Any:
        threads.append(threading.current_thread().name)
        return decode_long_body(body)

    monkeypatch.setattr(transport, "decode_long_body", decode)
    messages = [
        {"jsonrpc": "2.0", "method": "m", "params": {"n": n, "text": "x" * (50 if n % 2 else 500)}} for n in range(6)
    ]
    bodies = [json.dumps(m).encode() for m in messages]
    bodies.insert(3, b'{"jsonrpc": "2.0", "method": "m", "params": {"text": "' + b"y" * 400)  # long, never closed
    stream = b"".join(b"Content-Length: %d\r\n\r\n" % len(b) + b for b in bodies)
    chunks = [stream, b""]

    async def read() -> bytes:
        return chunks.pop(0)

    recorder = _Recorder()
    await transport.serve(recorder, read, threading.Event())  # type: ignore[arg-type]
    assert recorder.handled == messages  # in order; the broken long body skipped, what follows read
    assert len(threads) == 4 and threading.current_thread().name not in threads
