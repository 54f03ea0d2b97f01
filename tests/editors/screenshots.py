"""Screenshots of the real editors for the README, taken only when asked.

Set ``MARGIN_SCREENSHOTS`` to a folder (``docs/images`` to refresh the
README's pictures) and run ``pytest tests/editors -k screenshot``; unset, the
screenshot tests are skipped and cost nothing.

Two tools live here:

* :class:`Chromium`, a headless Chromium driven over the Chrome DevTools
  Protocol on a pipe (``--remote-debugging-pipe``: NUL-separated JSON on file
  descriptors 3 and 4, so no WebSocket library is needed);
* :func:`terminal_html`, which turns a terminal screen captured with
  ``tmux capture-pane -e -p`` (text with SGR escape codes) into an HTML page
  of the same cells, for Chromium to photograph.
"""

from __future__ import annotations

import base64
import fcntl
import html
import json
import os
import re
import subprocess
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any

_dir = os.environ.get("MARGIN_SCREENSHOTS")
SHOTS: Path | None = Path(_dir).resolve() if _dir else None
MAX_BYTES = 300_000  # keep each committed picture small

# The draft both editors show: scaling-book prose with a calc block, a wrong claim and a 1000x slip.
SCREENSHOT_DRAFT = """# How long does it take to train a 70B model?

The standard estimate: training costs `6 × parameters × tokens` FLOPs, and
the chips deliver their peak times the model FLOPs utilisation (MFU).

```calc
N = 70e9 param                # parameters
D = 15e12 token               # training tokens
C = 6 * N * D -> FLOP         # the classic 6ND
chips = 8192 chip
t = C / (chips * h100.flops_bf16 * 0.4) -> days
```

That is `6 * 70e9 * 15e12 = 6.3e24` FLOPs. On 8192 H100s at 40% MFU,
training takes about 12 days<!-- ≈ t -->.

A layer's `bf16[8, 128, 8192]` activations take
`2 * 8 * 128 * 8192 = 1.7e10` bytes.
"""


def _clear_of_3_and_4(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Chromium:
    """A headless Chromium whose first tab is driven over the DevTools protocol."""

    def __init__(self, chromium: str, url: str, profile: Path, width: int, height: int, scale: float = 1) -> None:
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        # Chromium's ends move to descriptors 3 and 4 in the child: give them numbers clear of those first.
        commands_read, replies_write = (_clear_of_3_and_4(fd) for fd in (commands_read, replies_write))
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--hide-scrollbars", "--remote-debugging-pipe", f"--window-size={width},{height}",
                 f"--force-device-scale-factor={scale}", f"--user-data-dir={profile}"]  # fmt: skip
        # The protocol pipe must be file descriptors 3 (commands in) and 4 (replies out) in Chromium.
        shell = f'exec "$0" "$@" 3<&{commands_read} 4>&{replies_write} {commands_read}<&- {replies_write}>&-'
        self.process = subprocess.Popen(["/bin/bash", "-c", shell, chromium, *flags, url], pass_fds=(commands_read, replies_write),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        os.close(commands_read)
        os.close(replies_write)
        self._next = 0
        self._waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        self._session = ""
        self.width, self.height, self.scale = width, height, scale

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._replies, "rb", buffering=0) as replies:
            while chunk := replies.read(1 << 16):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for message in messages:
                    reply = json.loads(message)
                    if "id" in reply and reply["id"] in self._waiting:
                        event, box = self._waiting.pop(reply["id"])
                        box.append(reply)
                        event.set()

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 30
    ) -> Any:
        """Send one protocol command (to the page's session unless told) and return its result."""
        with self._lock:
            self._next += 1
            ident = self._next
            event, box = threading.Event(), []  # type: ignore[var-annotated]
            self._waiting[ident] = (event, box)
            message = {"id": ident, "method": method, "params": params or {}}
            target = self._session if session is None else session
            if target:
                message["sessionId"] = target
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        if not event.wait(timeout):
            raise TimeoutError(f"Chromium did not answer {method}")
        reply = box[0]
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def attach(self, timeout: float = 60) -> None:
        """Attach to the page (the tab Chromium opened on the URL) and fix its viewport."""
        deadline = time.monotonic() + timeout
        while True:
            pages = [t for t in self.call("Target.getTargets", session="")["targetInfos"] if t["type"] == "page"]
            if pages or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert pages, "Chromium opened no page"
        self._session = self.call(
            "Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True}, session=""
        )["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": self.scale, "mobile": False})  # fmt: skip

    def navigate(self, url: str) -> None:
        """Load a URL in the page and wait until its fonts are ready."""
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
                      " && document.fonts.status === 'loaded'", 30)  # fmt: skip

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float) -> None:
        """Poll a JavaScript expression in the page until it is true."""
        deadline = time.monotonic() + timeout
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never showed: {expression}")
            time.sleep(0.1)

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> None:
        """Save the page (or a CSS-pixel rectangle of it) as a PNG."""
        params: dict[str, Any] = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        data = base64.b64decode(self.call("Page.captureScreenshot", params)["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        assert len(data) <= MAX_BYTES, f"{path} is {len(data)} bytes; make the window smaller"

    def close(self) -> None:
        """Stop Chromium."""
        try:
            os.close(self._commands)
        except OSError:
            pass
        self.process.kill()
        self.process.wait()


# --- a terminal screen as HTML ------------------------------------------------------------

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_OTHER_ESCAPE = re.compile(r"\x1b(?:\[[0-9;:?]*[A-Za-z]|\][^\x07]*\x07|[()][A-Z0-9])")
_BASIC = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
          "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"]  # fmt: skip


def _palette(n: int) -> str:
    if n < 16:
        return _BASIC[n]
    if n < 232:
        r, g, b = ((n - 16) // 36, (n - 16) // 6 % 6, (n - 16) % 6)
        return "#%02x%02x%02x" % tuple(0 if c == 0 else 55 + 40 * c for c in (r, g, b))
    grey = 8 + 10 * (n - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


def _colour(parts: list[str], i: int) -> tuple[str | None, int]:
    """Read an extended colour (``5;N`` or ``2;R;G;B``, also the colon forms) starting at parts[i]."""
    if i < len(parts) and parts[i] == "5" and i + 1 < len(parts):
        return _palette(int(parts[i + 1])), i + 2
    if i < len(parts) and parts[i] == "2" and i + 3 < len(parts):
        return "#%02x%02x%02x" % tuple(int(p or 0) for p in parts[i + 1 : i + 4]), i + 4
    return None, len(parts)


class _Style:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.fg: str | None = None
        self.bg: str | None = None
        self.underline_colour: str | None = None
        self.bold = self.italic = self.reverse = self.strike = False
        self.underline = ""  # "", "solid", "wavy", "double", "dotted", "dashed"

    def apply(self, codes: str) -> None:
        """Apply one SGR sequence's parameters (``1;38;2;R;G;B``, ``4:3``, ``58:2::R:G:B``...)."""
        parts = (codes or "0").split(";")
        i = 0
        while i < len(parts):
            code = parts[i]
            if ":" in code:  # one group in the colon form: an underline style or a colour
                head, *rest = code.split(":")
                if head == "4":
                    self.underline = ["", "solid", "double", "wavy", "dotted", "dashed"][int(rest[0] or 0) % 6]
                elif head in ("38", "48", "58"):
                    if rest[0] == "2" and len(rest) == 5:  # 38:2:<colour space>:R:G:B
                        rest = ["2", *rest[2:]]
                    self._set(head, _colour(rest, 0)[0])
                i += 1
            elif code in ("38", "48", "58"):
                colour, i = _colour(parts, i + 1)
                self._set(code, colour)
            else:
                self._plain(int(code or 0))
                i += 1

    def _set(self, which: str, colour: str | None) -> None:
        if which == "38":
            self.fg = colour
        elif which == "48":
            self.bg = colour
        else:
            self.underline_colour = colour

    def _plain(self, code: int) -> None:
        if code == 0:
            self.reset()
        elif code == 1:
            self.bold = True
        elif code == 3:
            self.italic = True
        elif code == 4:
            self.underline = "solid"
        elif code == 7:
            self.reverse = True
        elif code == 9:
            self.strike = True
        elif code == 21:
            self.underline = "double"
        elif code == 22:
            self.bold = False
        elif code == 23:
            self.italic = False
        elif code == 24:
            self.underline = ""
        elif code == 27:
            self.reverse = False
        elif code == 29:
            self.strike = False
        elif 30 <= code <= 37 or 90 <= code <= 97:
            self.fg = _BASIC[code - 30 if code < 90 else code - 82]
        elif code == 39:
            self.fg = None
        elif 40 <= code <= 47 or 100 <= code <= 107:
            self.bg = _BASIC[code - 40 if code < 100 else code - 92]
        elif code == 49:
            self.bg = None
        elif code == 59:
            self.underline_colour = None

    def css(self, foreground: str, background: str) -> str:
        fg, bg = self.fg or foreground, self.bg or background
        if self.reverse:
            fg, bg = bg, fg
        rules = [f"color:{fg}"]
        if bg != background:
            rules.append(f"background:{bg}")
        if self.bold:
            rules.append("font-weight:bold")
        if self.italic:
            rules.append("font-style:italic")
        lines = []
        if self.underline:
            lines.append("underline")
            rules.append(f"text-decoration-style:{self.underline}")
            if self.underline_colour:
                rules.append(f"text-decoration-color:{self.underline_colour}")
        if self.strike:
            lines.append("line-through")
        if lines:
            rules.append("text-decoration-line:" + " ".join(lines))
        return ";".join(rules)


def terminal_html(screen: str, columns: int, foreground: str, background: str, cursor: tuple[int, int] | None = None,
                  font_px: int = 15) -> str:  # fmt: skip
    """An HTML page showing a captured terminal screen cell for cell (``#screen`` is the terminal).

    ``cursor`` is the (column, row) of the cursor, drawn as a block; ``foreground``
    and ``background`` are the terminal's default colours.
    """
    style = _Style()
    block = f"background:{foreground};color:{background}"
    rows = []
    for y, line in enumerate(screen.rstrip("\n").split("\n")):
        pieces: list[str] = []
        position = column = 0
        at = cursor[0] if cursor and cursor[1] == y else -1
        for match in [*_SGR.finditer(line), None]:
            text = _OTHER_ESCAPE.sub("", line[position : match.start() if match else len(line)])
            if column <= at < column + _width(text):
                before = _split(text, at - column)
                pieces.append(_span(before, style.css(foreground, background)))
                under = text[len(before) : len(before) + 1] or " "
                pieces.append(_span(under, style.css(foreground, background) + ";" + block))
                pieces.append(_span(text[len(before) + 1 :], style.css(foreground, background)))
            else:
                pieces.append(_span(text, style.css(foreground, background)))
            column += _width(text)
            if match:
                style.apply(match.group(1))
                position = match.end()
        if column <= at:  # the cursor sits past the end of the text
            pieces.append(_span(" " * (at - column), "") + _span(" ", block))
        rows.append("<div class=row>" + "".join(pieces) + "</div>")
    return f"""<!doctype html><meta charset=utf-8>
<style>
  html, body {{ margin: 0; background: #ffffff; }}
  #screen {{ display: inline-block; padding: 14px 16px; background: {background}; color: {foreground};
            font: {font_px}px/1.32 'DejaVu Sans Mono', monospace; font-variant-ligatures: none; }}
  .row {{ white-space: pre; width: {columns}ch; height: 1.32em; overflow: hidden; }}
  span {{ text-decoration-thickness: 1px; text-underline-offset: 3px; text-decoration-skip-ink: none; }}
</style>
<div id=screen>{"".join(rows)}</div>
"""


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in text)


def _split(text: str, cells: int) -> str:
    """The longest prefix of text that fits in ``cells`` terminal cells."""
    for i in range(len(text) + 1):
        if _width(text[: i + 1]) > cells or i == len(text):
            return text[:i]
    return text


def _span(text: str, css: str) -> str:
    return f'<span style="{css}">{html.escape(text)}</span>' if text else ""
