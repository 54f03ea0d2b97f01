"""Margin's application layer: the CLI (and, later, the language server)."""
