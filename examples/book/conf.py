"""Plain Sphinx with myst-parser: sphinx-build -W examples/book _build/html (docs/publishing.md)."""

project = "Training a 70B model"
extensions = ["myst_parser", "sphinx_exercise", "margin.sphinx"]
myst_enable_extensions = ["colon_fence"]
root_doc = "intro"
exclude_patterns = ["_build", "myst.yml", "_toc.yml", "_config.yml"]
margin_fail_on = "warning"  # "error": stop at the first page with a failing check
# The chapters are listed in _toc.yml (Jupyter Book's table of contents), not in a toctree.
suppress_warnings = ["toc.not_included"]
