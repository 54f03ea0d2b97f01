"""Fixtures for measurements: real workers (real JAX on the CPU), fake ``ssh`` and ``gcloud`` that run locally.

The real ssh cannot reach anything from the test machine, so ``ssh`` and
``gcloud`` are stand-ins put first on PATH: they log their arguments, skip
the options, and run the remote command here with ``sh -c`` (a host named
``unreachable…`` makes ``ssh`` fail as it does when it cannot connect: a
message on stderr and exit 255).
"""

from __future__ import annotations

import importlib.util
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

needs_jax = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None, reason="JAX is not installed (pip install 'margin[jax]')"
)
#: A tiny method: the tests time 64x64 matmuls on a shared 2-core machine.
FAST = {"min_samples": 3, "min_seconds": 0.0, "warmup": 1}

FAKE_SSH = r"""#!/bin/sh
# A stand-in for ssh: log the arguments, skip the options, run the remote command here.
echo "ssh $*" >> "$FAKE_LOG"
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-i|-p|-l|-F) shift 2;;
    -*) shift;;
    *) break;;
  esac
done
host="$1"; shift
case "$host" in
  unreachable*) echo "ssh: connect to host $host port 22: Connection refused" >&2; exit 255;;
esac
exec sh -c "$*"
"""

FAKE_GCLOUD = r"""#!/bin/sh
# A stand-in for gcloud compute tpus tpu-vm ssh: log the arguments, run --command here.
echo "gcloud $*" >> "$FAKE_LOG"
for arg in "$@"; do
  case "$arg" in --command=*) command="${arg#--command=}";; esac
done
exec sh -c "$command"
"""


def executable(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Fake ``ssh`` and ``gcloud`` first on PATH; yields the log of their command lines."""
    folder = tmp_path / "bin"
    folder.mkdir()
    executable(folder / "ssh", FAKE_SSH)
    executable(folder / "gcloud", FAKE_GCLOUD)
    log = tmp_path / "remote.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield log
