---@brief
--- Margin: unit tests for technical writing (https://github.com/margin-check/margin).
---
--- Install the `margin` command from the repository (it is not on PyPI yet):
---
--- ```sh
--- pipx install git+https://github.com/margin-check/margin
--- # or, from a clone: python3 -m pip install .
--- ```
---
--- Put this file on your runtimepath as `lsp/margin.lua` (for example
--- `~/.config/nvim/lsp/margin.lua`), then enable it:
---
--- ```lua
--- vim.lsp.enable('margin')
--- vim.lsp.inlay_hint.enable(true)                 -- computed values in the margin
--- vim.diagnostic.config({ virtual_text = true })  -- messages at the end of the line (off by default in 0.11)
--- ```
---
--- Settings go in `init_options` or `settings.margin` (the same keys as
--- `[tool.margin]`, camelCase or snake_case):
---
--- ```lua
--- vim.lsp.config('margin', { settings = { margin = { tolerance = 0.03, codeSpans = true } } })
--- ```

---@type vim.lsp.Config
return {
  cmd = { 'margin', 'lsp' },
  filetypes = { 'markdown' },
  root_markers = { 'margin.toml', 'pyproject.toml', '.git' },
  settings = { margin = vim.empty_dict() },  -- an object, not the array `{}` would encode to
}
