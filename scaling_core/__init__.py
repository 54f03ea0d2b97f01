"""Margin's pure engine: Markdown drafts in, analysis out.

No editor protocol, no file I/O beyond packaged data; deterministic; never
raises on user input.  The public surface is small.
"""

from scaling_core.config import Config, config_from_mapping
from scaling_core.diagnostics import CODES, Diagnostic, Severity
from scaling_core.document.analysis import AnalysisCancelled, ImportContext, SourceLoader, analyze_document
from scaling_core.document.results import (
    CheckKind,
    CheckResult,
    CheckStatus,
    DocumentAnalysis,
    ProblemResult,
    ProblemStatus,
    ValueResult,
)
from scaling_core.text import LineIndex, Span
from scaling_core.units.quantity import Quantity

__version__ = "0.1.0"

__all__ = [
    "CODES",
    "AnalysisCancelled",
    "CheckKind",
    "CheckResult",
    "CheckStatus",
    "Config",
    "Diagnostic",
    "DocumentAnalysis",
    "ImportContext",
    "LineIndex",
    "ProblemResult",
    "ProblemStatus",
    "Quantity",
    "Severity",
    "SourceLoader",
    "Span",
    "ValueResult",
    "__version__",
    "analyze_document",
    "config_from_mapping",
]
