---@brief
--- Margin: unit tests for technical writing (https://github.com/your-org/margin).
---
--- Install the `margin` command (`pip install margin`), put this file on your
--- runtimepath as `lsp/margin.lua` (for example `~/.config/nvim/lsp/margin.lua`),
--- then enable it:
---
--- ```lua
--- vim.lsp.enable('margin')
--- vim.lsp.inlay_hint.enable(true)   -- computed values in the margin
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
  settings = { margin = {} },
}
