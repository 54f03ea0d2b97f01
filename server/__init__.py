"""Margin's application layer: the ``margin`` command line, the language server (``server.lsp``), and file I/O."""
