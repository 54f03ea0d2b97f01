"""Sweeps load NumPy on first use; floats and sweeps give the same answers."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT, codes, run


def run_python(source: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` in a fresh interpreter (so ``sys.modules`` starts empty)."""
    return subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(source)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_a_draft_without_sweeps_never_imports_numpy() -> None:
    done = run_python(
        """
        import sys
        import server.cli
        from scaling_core import analyze_document
        text = open("examples/worked-problems.md", encoding="utf-8").read()
        analysis = analyze_document(text, "worked-problems.md")
        assert analysis.checks and not analysis.diagnostics
        print("numpy" in sys.modules)
        """
    )
    assert done.stdout.strip() == "False", done.stderr


def test_numpy_first_imported_mid_analysis_prints_no_warnings() -> None:
    # -W error turns any RuntimeWarning NumPy emits (overflow, 0/0) into an exception.
    done = run_python(
        """
        import sys
        from scaling_core import analyze_document
        text = "```calc\\nx = [1e300, 1] * 1e300\\ny = [0, 1] * 1e400 / 1e400\\nz = [1, 2] * 3\\n```\\n"
        analysis = analyze_document(text, "d.md")
        assert "numpy" in sys.modules
        print(sorted(d.code for d in analysis.diagnostics))
        """,
        "-W",
        "error",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['E002', 'E002']"
    assert done.stderr == ""


@pytest.mark.parametrize("function", ["ceil", "floor", "round", "abs", "sqrt", "log2", "log10", "ln", "exp"])
@pytest.mark.parametrize("x", [0.5, 2.5, 3.5, -2.5, 7.0, 1e-3, 1e6, 709.0, 710.0, 0.0, -1.0])
def test_a_function_gives_the_same_value_on_a_float_and_a_sweep(function: str, x: float) -> None:
    scalar = run(f"{function}({x!r})")
    swept = run(f"{function}([{x!r}, {x!r}])")
    assert codes(scalar) == codes(swept)
    if scalar.value is None:
        return
    one = scalar.value.quantity.value
    many = swept.value.quantity.value  # type: ignore[union-attr]
    assert type(one) is float
    assert all(math.isclose(one, float(v), rel_tol=1e-15) for v in many)


@pytest.mark.parametrize(
    ("text", "display"), [("max(1, 3, 2)", "3"), ("max([1, 2], 3)", "[3, 3]"), ("min(2 s, 3 ms)", "3 ms")]
)
def test_min_and_max_over_floats_and_sweeps(text: str, display: str) -> None:
    assert run(text).value.display == display  # type: ignore[union-attr]
