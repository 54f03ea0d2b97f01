"""Python calc blocks: nothing runs unless trusted; when trusted, they run in another process only."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from scaling_core import Severity
from scaling_core.queries.assist import completions, signature_at
from server.analysis.runner import AnalysisRunner
from tests.cli.test_check_command import margin
from tests.conftest import ROOT
from tests.jax.conftest import block, calc, trusted


def writes(path: Path) -> str:
    return block(f"import os\nopen({str(path)!r}, 'w').write(str(os.getpid()))\ndef f(x):\n    return x")


def test_an_untrusted_block_runs_nothing_and_one_diagnostic_says_how_to_trust(tmp_path: Path) -> None:
    runner = AnalysisRunner()
    analysis = trusted(writes(tmp_path / "ran"), runner, trust=False)
    assert not (tmp_path / "ran").exists()
    assert runner.requests == 0 and not runner.process.running
    assert [(d.code, d.severity) for d in analysis.diagnostics] == [("T001", Severity.WARNING)]
    assert "trust = true" in analysis.diagnostics[0].message


def test_calls_of_an_untrusted_blocks_function_are_untested_not_errors(runner: AnalysisRunner) -> None:
    text = writes(Path("/nonexistent/never")) + calc("c = xla_cost(f, bf16[8, 16])\nc.flops == 256\nt = c.flops\nt > 0")
    analysis = trusted(text, runner, trust=False)
    assert [d.code for d in analysis.diagnostics] == ["T001", "T003", "T003", "T003", "T003"]
    assert [c.status for c in analysis.checks] == ["skip", "skip"]
    assert sum("trust" in d.message for d in analysis.diagnostics) == 1


def test_a_trusted_block_runs_in_the_analysis_process(tmp_path: Path, runner: AnalysisRunner) -> None:
    analysis = trusted(writes(tmp_path / "ran"), runner)
    assert analysis.diagnostics == []
    assert int((tmp_path / "ran").read_text()) != os.getpid()


def test_an_exception_is_an_error_at_the_last_frame_in_the_block(runner: AnalysisRunner) -> None:
    text = "# Draft\n\n" + block("def g():\n    return 1 / 0\n\nx = g()")
    (diagnostic,) = trusted(text, runner).diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("T002", Severity.ERROR)
    assert "ZeroDivisionError: division by zero" in diagnostic.message
    assert text[diagnostic.span.start : diagnostic.span.end] == "    return 1 / 0"


def test_a_missing_module_is_a_warning_that_says_what_to_install(runner: AnalysisRunner) -> None:
    (diagnostic,) = trusted(block("import margin_no_such_module"), runner).diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("T001", Severity.WARNING)
    assert "module 'margin_no_such_module' is not installed" in diagnostic.message


def test_output_of_the_authors_code_cannot_corrupt_the_protocol(runner: AnalysisRunner) -> None:
    code = "import os, sys\nprint('{not json')\nos.write(1, b'garbage\\n')\nsys.stdout.flush()\ndef f(x):\n    return x"
    assert trusted(block(code), runner).diagnostics == []


def test_a_block_past_its_deadline_is_stopped_and_the_next_draft_still_runs() -> None:
    runner = AnalysisRunner(load_seconds=2)
    try:
        started = time.monotonic()
        (diagnostic,) = trusted(block("import time\ntime.sleep(120)"), runner).diagnostics
        assert time.monotonic() - started < 20
        assert diagnostic.code == "T001" and "did not answer within 2 s" in diagnostic.message
        assert trusted(block("def f(x):\n    return x"), runner).diagnostics == []
    finally:
        runner.close()


def test_an_analysis_process_that_cannot_start_is_a_warning_naming_the_command() -> None:
    runner = AnalysisRunner(command=["/nonexistent/python", "-m", "server.analysis.child"])
    (diagnostic,) = trusted(block("x = 1"), runner).diagnostics
    assert (
        diagnostic.code == "T001" and "could not start the analysis process (/nonexistent/python)" in diagnostic.message
    )


def test_a_process_that_dies_mid_block_is_reported_and_replaced(runner: AnalysisRunner) -> None:
    (diagnostic,) = trusted(block("import os\nos._exit(3)"), runner).diagnostics
    assert diagnostic.code == "T001" and "exited (code 3)" in diagnostic.message
    assert trusted(block("def g(x):\n    return x"), runner).diagnostics == []


def test_the_callers_process_never_imports_jax() -> None:
    script = (
        "import sys\n"
        "from scaling_core import Config, analyze_document\n"
        "from scaling_core.document.analysis import ImportContext\n"
        "from server.analysis.runner import AnalysisRunner\n"
        "runner = AnalysisRunner()\n"
        f"text = {block('import jax' + chr(10) + 'def f(x):' + chr(10) + '    return x @ x') + calc('xla_cost(f, f32[4, 4]).flops > 0')!r}\n"
        "analysis = analyze_document(text, 'x.md', Config(trust=True), context=ImportContext(trusted=runner))\n"
        "runner.close()\n"
        "print(sorted(d.code for d in analysis.diagnostics), 'jax' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "False"


def test_margin_check_runs_blocks_only_in_a_trusted_workspace(tmp_path: Path) -> None:
    (tmp_path / "draft.md").write_text(block("x = 1 / 0"))
    untrusted = margin("check", "draft.md", cwd=tmp_path)
    assert untrusted.returncode == 0 and "T001" in untrusted.stdout
    (tmp_path / "margin.toml").write_text("trust = true\n")
    checked = margin("check", "draft.md", cwd=tmp_path)
    assert checked.returncode == 1 and "T002" in checked.stdout and "ZeroDivisionError" in checked.stdout


def test_the_trusted_calls_complete_with_their_signature() -> None:
    text = calc("c = xla_")
    analysis = trusted(text, AnalysisRunner(), trust=False)
    (item,) = [c for c in completions(analysis, text.index("xla_") + 4) if c.label.startswith("xla_")]
    assert item.label == "xla_cost" and "FLOP" not in item.detail and "xla_cost(f, bf16[B, D]" in item.detail
    text = calc("c = xla_cost(f, bf16[8])")
    signature = signature_at(trusted(text, AnalysisRunner(), trust=False), text.index("bf16"))
    assert signature is not None and signature.active == 1
