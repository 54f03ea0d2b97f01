"""Engine records (``scaling_core/records.py``): frozen for mypy, plain data classes at run time."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path

import pytest

from scaling_core.expr import syntax as ast
from scaling_core.records import record
from scaling_core.text import Span

ROOT = Path(__file__).resolve().parents[2]


@record(slots=True)
class _Point:
    x: int
    y: int = 0


@record(eq=False)
class _Handle:
    name: str


@record
class _OwnHash:
    key: str
    extra: int

    def __hash__(self) -> int:
        return hash(self.key)


def test_a_record_compares_and_hashes_by_its_fields_like_a_frozen_data_class() -> None:
    assert _Point(1, 2) == _Point(1, 2) and _Point(1, 2) != _Point(2, 1)
    assert hash(_Point(1, 2)) == hash(_Point(1, 2))
    assert len({_Point(1, 2), _Point(1, 2), _Point(3)}) == 2
    assert {ast.Name("a", Span(0, 1)): 1}[ast.Name("a", Span(0, 1))] == 1  # syntax nodes as dict keys
    assert [f.name for f in fields(_Point)] == ["x", "y"] and not hasattr(_Point(1), "__dict__")
    assert replace(_Point(1, 2), y=5) == _Point(1, 5)


def test_eq_false_keeps_identity_and_a_class_hash_of_its_own_is_kept() -> None:
    first, second = _Handle("h"), _Handle("h")
    assert first != second and len({first, second}) == 2
    assert hash(_OwnHash("k", 1)) == hash(_OwnHash("k", 2)) == hash("k")


def test_a_record_is_not_frozen_at_run_time_so_init_stays_cheap() -> None:
    point = _Point(1)
    try:
        point.x = 2  # type: ignore[misc]  # what mypy rejects (the next test); at run time it is allowed
    except FrozenInstanceError:  # pragma: no cover - the point of the module is that this does not happen
        pytest.fail("a record is frozen at run time: its __init__ pays object.__setattr__ per field")
    assert point.x == 2


def test_mypy_rejects_an_assignment_to_a_record_field(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from scaling_core.expr.syntax import Name\n"
        "from scaling_core.text import Span\n"
        "node = Name('a', Span(0, 1))\n"
        "node.name = 'b'\n",
        "utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(probe)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    if "No module named mypy" in done.stderr:
        pytest.skip("mypy is not installed")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"probe\.py:4: error: .*\"name\" .*read-only", done.stdout), done.stdout


def test_the_engine_declares_immutable_records_with_record_only() -> None:
    """One mechanism: a frozen data class in the engine would pay the slow __init__ again."""
    frozen = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "scaling_core").rglob("*.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if re.search(r"dataclass\([^)]*frozen=True", line)
    ]
    assert frozen == []
