"""``margin check``'s ruff-style options, run as a user runs them: a real subprocess, real files."""

from __future__ import annotations

import json
import os
import pty
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli.test_check_command import BAD, GOOD, margin
from tests.cli.test_packaging import CRASH
from tests.conftest import ROOT

UNIT_SLIP = "# Units\n\nA slice holds `8960 * 96 = 860TB` of HBM.\n"


@pytest.fixture
def drafts(tmp_path: Path) -> Path:
    (tmp_path / "good.md").write_text(GOOD, "utf-8")
    (tmp_path / "bad.md").write_text(BAD, "utf-8")
    (tmp_path / "slip.md").write_text(UNIT_SLIP, "utf-8")
    return tmp_path


def test_quiet_prints_diagnostics_only(drafts: Path) -> None:
    loud = margin("check", "bad.md", cwd=drafts)
    quiet = margin("check", "-q", "bad.md", cwd=drafts)
    assert loud.returncode == quiet.returncode == 1
    assert "checks 0 passed" in loud.stdout and "checks" not in quiet.stdout
    assert "C001" in quiet.stdout
    assert margin("check", "--quiet", "good.md", cwd=drafts).stdout == ""


def test_exit_zero(drafts: Path) -> None:
    result = margin("check", "--exit-zero", "bad.md", cwd=drafts)
    assert result.returncode == 0 and "C001" in result.stdout
    assert margin("check", "--exit-zero", "missing.md", cwd=drafts).returncode == 2


def test_output_file(drafts: Path) -> None:
    result = margin("check", "--format", "json", "--output-file", "out/report.json", "bad.md", cwd=drafts)
    assert result.returncode == 2 and "out/report.json" in result.stderr  # the folder must exist
    (drafts / "out").mkdir()
    result = margin("check", "--format", "json", "--output-file", "out/report.json", "bad.md", cwd=drafts)
    assert result.returncode == 1 and result.stdout == ""
    report = json.loads((drafts / "out" / "report.json").read_text("utf-8"))
    assert report["summary"]["checks"]["fail"] == 1


def test_statistics_counts_per_code(drafts: Path) -> None:
    result = margin("check", "--statistics", ".", cwd=drafts)
    assert result.returncode == 1
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows == [
        ["1", "C001", "[*] check failed"],
        ["1", "U005", "    claim matches only with a unit prefix the author did not write"],
    ]


def test_select_and_ignore(drafts: Path) -> None:
    ignored = margin("check", "--ignore", "C001", "--format", "json", ".", cwd=drafts)
    report = json.loads(ignored.stdout)
    assert ignored.returncode == 0
    assert [d["code"] for d in report["diagnostics"]] == ["U005"]
    assert [c["status"] for c in report["checks"] if c["path"] == "bad.md"] == ["skip"]  # an ignored failure is skipped
    selected = json.loads(margin("check", "--select", "U", "--format", "json", ".", cwd=drafts).stdout)
    assert [d["code"] for d in selected["diagnostics"]] == ["U005"]
    both = json.loads(
        margin("check", "--select", "C,U", "--ignore", "U005", "--format", "json", ".", cwd=drafts).stdout
    )
    assert [d["code"] for d in both["diagnostics"]] == ["C001"]
    unknown = margin("check", "--select", "X9", ".", cwd=drafts)
    assert unknown.returncode == 2 and "'X9' matches no diagnostic code" in unknown.stderr


def test_color_choices(drafts: Path) -> None:
    always = margin("check", "--color", "always", "bad.md", cwd=drafts).stdout
    assert "\x1b[1;31merror\x1b[0m" in always and "\x1b[31m" in always  # severity and caret
    assert "\x1b[" not in margin("check", "--color", "never", "bad.md", cwd=drafts).stdout
    assert "\x1b[" not in margin("check", "bad.md", cwd=drafts).stdout  # auto, not a terminal
    env_force = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "FORCE_COLOR": "1"}
    forced = subprocess.run([sys.executable, "-m", "server", "check", "bad.md"], cwd=drafts, env=env_force,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert "\x1b[1;31merror" in forced.stdout
    env_no = dict(env_force, NO_COLOR="1")
    plain = subprocess.run([sys.executable, "-m", "server", "check", "bad.md"], cwd=drafts, env=env_no,
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert "\x1b[" not in plain.stdout


def _read_terminal(master: int, process: subprocess.Popen, limit: float = 60.0) -> str:
    """Everything written to a pseudo-terminal until the process ends."""
    chunks = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    return b"".join(chunks).decode("utf-8", "replace")


def _on_terminal(args: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``margin`` with stdout and stderr on a terminal (stderr) / a pipe (stdout)."""
    master, slave = pty.openpty()
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TERM": "xterm", **(extra_env or {})}
    process = subprocess.Popen([sys.executable, "-m", "server", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=slave, text=True)  # fmt: skip
    os.close(slave)
    terminal = _read_terminal(master, process)
    stdout = process.stdout.read()
    os.close(master)
    return process.wait(timeout=60), stdout, terminal


def test_color_auto_on_a_terminal(drafts: Path) -> None:
    master, slave = pty.openpty()
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TERM": "xterm"}
    process = subprocess.Popen([sys.executable, "-m", "server", "check", "bad.md"], cwd=drafts, env=env,
                               stdout=slave, stderr=slave)  # fmt: skip
    os.close(slave)
    screen = _read_terminal(master, process)
    os.close(master)
    assert process.wait(timeout=60) == 1
    assert "\x1b[1;31merror\x1b[0m" in screen


def test_progress_bar_on_a_terminal_for_many_files(tmp_path: Path) -> None:
    for number in range(205):
        (tmp_path / f"draft{number:03}.md").write_text(f"Step {number}: `2 * {number} = {2 * number}`.\n", "utf-8")
    code, stdout, terminal = _on_terminal(["check", "."], tmp_path)
    assert code == 0 and "205 files: checks 205 passed" in stdout
    assert "margin check:" in terminal and "/205 [" in terminal  # tqdm's bar, on stderr only
    assert "/205 [" not in stdout
    code, _, quiet_terminal = _on_terminal(["check", "-q", "."], tmp_path)
    assert code == 0 and "/205 [" not in quiet_terminal
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "one.md").write_text(GOOD, "utf-8")
    _, _, small = _on_terminal(["check", "small"], tmp_path)
    assert "margin check:" not in small


def test_stdin_with_a_file_name(drafts: Path) -> None:
    result = margin("check", "-", "--stdin-filename", "notes/bad.md", cwd=drafts, stdin=BAD)
    assert result.returncode == 1
    assert result.stdout.startswith("notes/bad.md:7:18: error C001")
    anonymous = margin("check", "-", "--format", "json", cwd=drafts, stdin=GOOD)
    assert anonymous.returncode == 0 and json.loads(anonymous.stdout)["files"] == ["-"]
    assert margin("check", "-", "good.md", cwd=drafts, stdin=GOOD).returncode == 2
    assert margin("check", "--stdin-filename", "x.md", "good.md", cwd=drafts).returncode == 2


def test_stdin_honours_the_config_and_force_exclude(drafts: Path) -> None:
    (drafts / "margin.toml").write_text('exclude = ["drafts/old/**"]\ntolerance = "1%"\n', "utf-8")
    excluded = margin("check", "-", "--stdin-filename", "drafts/old/bad.md", "--force-exclude", cwd=drafts, stdin=BAD)
    assert excluded.returncode == 0 and "C001" not in excluded.stdout
    checked = margin("check", "-", "--stdin-filename", "drafts/old/bad.md", cwd=drafts, stdin=BAD)
    assert checked.returncode == 1 and "C001" in checked.stdout


def test_stdin_fix_writes_the_fixed_draft_to_stdout(drafts: Path) -> None:
    result = margin("check", "-", "--fix", "--stdin-filename", "bad.md", cwd=drafts, stdin=BAD)
    assert result.stdout == BAD.replace("170 ms", "0.189 ms")
    assert "checks 1 passed" in result.stderr
    assert result.returncode == 0


class _Lines:
    """The lines a process writes to a pipe, read by a thread, waited for with a deadline."""

    def __init__(self, stream) -> None:
        self.queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self.queue.put(line)
        self.queue.put("")

    def wait_for(self, text: str, deadline: float) -> str:
        seen = ""
        while text not in seen:
            try:
                line = self.queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise TimeoutError(f"never saw {text!r}; saw {seen!r}") from None
            if not line:
                raise EOFError(f"output ended before {text!r}; saw {seen!r}")
            seen += line
        return seen


def test_watch_checks_again_after_a_save(drafts: Path) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    # Ctrl-C is SIGINT at its default: a test run started in the background (`cmd &` without job
    # control) ignores SIGINT, and a child would inherit that and never stop.
    process = subprocess.Popen([sys.executable, "-m", "server", "check", "--watch", "good.md"], cwd=drafts, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    out, err = _Lines(process.stdout), _Lines(process.stderr)
    try:
        deadline = time.monotonic() + 60
        assert "checks 2 passed, 0 failed" in out.wait_for("errors", deadline)
        err.wait_for("watching for changes", deadline)
        (drafts / "good.md").write_text(BAD, "utf-8")
        assert "C001" in out.wait_for("checks 0 passed, 1 failed", deadline)
        assert "changed: good.md" in err.wait_for("watching for changes", deadline)
        (drafts / "unrelated.txt").write_text("not a draft", "utf-8")
        (drafts / "good.md").write_text(GOOD, "utf-8")
        assert "checks 2 passed, 0 failed" in out.wait_for("errors", deadline)
        err.wait_for("watching for changes", deadline)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0  # the last run passed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_internal_error_is_exit_2_and_one_line(drafts: Path) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TMPDIR": str(drafts)}
    result = subprocess.run([sys.executable, "-c", CRASH, "check", "good.md"], cwd=drafts, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("margin: internal error (a bug in Margin") and "RuntimeError: crafted failure" in line
    assert "--debug" in line
    (saved,) = drafts.glob("margin-crash-*.txt")
    assert str(saved) in line and "Traceback" in saved.read_text("utf-8")
    for position in (["--debug", "check", "good.md"], ["check", "--debug", "good.md"]):
        debug = subprocess.run([sys.executable, "-c", CRASH, *position], cwd=drafts, env=env,
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert debug.returncode == 2 and "Traceback (most recent call last)" in debug.stderr


def test_a_failed_check_is_still_exit_1_not_an_internal_error(drafts: Path) -> None:
    result = margin("check", "bad.md", cwd=drafts)
    assert result.returncode == 1 and "internal error" not in result.stderr


def test_a_file_name_that_is_not_utf8_is_shown_escaped(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path)
    with open(os.path.join(folder, b"caf\xe9.md"), "w", encoding="utf-8") as handle:
        handle.write(BAD)
    for form in ("text", "json", "github", "sarif", "junit"):
        result = margin("check", "--format", form, ".", cwd=tmp_path)
        assert result.returncode == 1, (form, result.stderr)
        assert "internal error" not in result.stderr


def test_junit_records_the_seconds_each_file_took(drafts: Path) -> None:
    import xml.etree.ElementTree as ET

    report = ET.fromstring(margin("check", "--format", "junit", ".", cwd=drafts).stdout)
    times = [float(suite.get("time")) for suite in report.iter("testsuite")]
    assert len(times) == 3 and sum(times) > 0  # the first file also pays for loading the catalog


def test_verbose_lists_every_skipped_check_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "quote.md").write_text(
        '<!-- margin: ignore C001 -->\n> "`2 * 3 = 7` per token"\n\nAnd `2 * 2 = 4`.\n', "utf-8"
    )
    plain = margin("check", "quote.md", cwd=tmp_path)
    assert plain.returncode == 0 and "1 passed" in plain.stdout and "1 skipped" in plain.stdout
    assert "skipped:" not in plain.stdout
    verbose = margin("check", "-v", "quote.md", cwd=tmp_path)
    assert "quote.md:2:5: skipped: suppressed: '2 * 3' is 6, not = 7" in verbose.stdout
