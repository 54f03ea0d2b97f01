"""Trusted code, run outside the server's process.

``runner.AnalysisRunner`` is what ``margin check`` and the language server
hand the engine as its :class:`~scaling_core.external.TrustedCode` in a trusted
workspace; ``process.py`` starts and supervises the analysis process;
``child.py`` is that process (``python -m server.analysis.child``), and
``costs.py`` and ``comm.py`` are the parts of it that import
JAX.  Nothing here imports JAX in the caller's process.
"""
