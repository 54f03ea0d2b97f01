"""Editor queries over a finished analysis: pure functions of (analysis, offset)."""
