"""``margin lsp``: the language server (pygls 2.x). Thin: get state, call one core query, convert."""
