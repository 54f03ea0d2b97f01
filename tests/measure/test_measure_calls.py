"""measure_* calls read the measurement cache: found, missing, stale, noisy, ambiguous; never a false verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from scaling_core import Config, DocumentAnalysis, Severity, analyze_document
from scaling_core.document.analysis import ImportContext
from scaling_core.measured import MeasureRequest
from server.measurements import MeasurementCache

MATMUL = "t = measure_matmul(bf16[B, 64], bf16[64, 64], h100)"


def draft(*lines: str, sizes: str = "B = 32") -> str:
    return "```calc\n" + sizes + "\n" + "\n".join(lines) + "\n```\n"


def analyse(text: str, cache: MeasurementCache | None, path: str = "draft.md") -> DocumentAnalysis:
    return analyze_document(text, path, Config(), context=ImportContext(measurements=cache))


class Recorder:
    """Records the requests of an analysis (as margin measure's collector does) and answers from a cache."""

    def __init__(self, cache: MeasurementCache) -> None:
        self.cache, self.requests = cache, []

    def lookup(self, request):  # noqa: ANN001, ANN201 - the MeasurementSource protocol
        self.requests.append(request)
        return self.cache.lookup(request)


def measured(
    cache: MeasurementCache, text: str, device: str, median: float = 1e-3, cv: float = 0.02, path: str = "draft.md"
) -> MeasureRequest:
    """Put a measurement of every request ``text`` makes into the cache, as margin measure would."""
    recorder = Recorder(cache)
    analyse(text, recorder, path)  # type: ignore[arg-type]
    for request in recorder.requests:
        result = {"median_s": median, "min_s": median * 0.9, "p90_s": median * 1.1, "cv": cv, "n": 20,
                  "compile_s": 0.25, "samples": [median] * 20}  # fmt: skip
        cache.record(request, device, result, {"device_kind": "NVIDIA H100 80GB HBM3", "host": "gpu-box",
                                               "jax": "0.10.2", "date": "2026-05-01T10:00:00Z"})  # fmt: skip
    cache.save()
    return recorder.requests[0]


@pytest.fixture
def cache(tmp_path: Path) -> MeasurementCache:
    return MeasurementCache(tmp_path)


def diagnostics(analysis: DocumentAnalysis) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in analysis.diagnostics]


def test_a_missing_measurement_is_untested_and_says_how_to_measure(cache: MeasurementCache) -> None:
    analysis = analyse(draft(MATMUL, "t.median < 1 s"), cache)
    assert diagnostics(analysis)[0] == ("T003", "untested: no measurement for h100; run margin measure")
    assert [c.status for c in analysis.checks] == ["skip"]
    assert all(d.severity != Severity.ERROR for d in analysis.diagnostics)


def test_a_measurement_in_the_cache_gives_times_in_seconds_and_a_verdict(tmp_path: Path) -> None:
    text = draft(MATMUL, "t.median ≈ 1 ms", "t.min < t.median", "t.samples == 20", "t.cv < 0.1")
    measured(MeasurementCache(tmp_path), text, "h100")
    analysis = analyse(text, MeasurementCache(tmp_path))  # read back from the file
    assert diagnostics(analysis) == []
    assert [c.status for c in analysis.checks] == ["pass"] * 4
    wrong = analyse(text.replace("≈ 1 ms", "≈ 2 ms"), MeasurementCache(tmp_path))
    assert [c.status for c in wrong.checks] == ["fail", "pass", "pass", "pass"]


def test_the_device_is_part_of_the_key(cache: MeasurementCache) -> None:
    measured(cache, draft(MATMUL), "h100")
    analysis = analyse(draft(MATMUL.replace("h100", "tpu_v5e"), "t.median < 1 s"), cache)
    assert diagnostics(analysis)[0] == ("T003", "untested: no measurement for tpu_v5e; run margin measure")


def test_a_call_naming_no_device_takes_the_one_it_was_measured_on(cache: MeasurementCache) -> None:
    text = draft("t = measure_copy(64 MiB)", "t.median ≈ 1 ms")
    measured(cache, text, "cpu")
    assert [c.status for c in analyse(text, cache).checks] == ["pass"]
    measured(cache, text, "h100", median=5e-4)  # now two devices: which one is meant is not known
    analysis = analyse(text, cache)
    assert diagnostics(analysis)[0][0] == "T003"
    assert "measured on several devices (cpu, h100)" in diagnostics(analysis)[0][1]


def test_a_changed_size_is_a_stale_warning_and_no_verdict(cache: MeasurementCache) -> None:
    measured(cache, draft(MATMUL, "t.median ≈ 1 ms"), "h100")
    analysis = analyse(draft(MATMUL, "t.median ≈ 1 ms", sizes="B = 64"), cache)
    codes = [d.code for d in analysis.diagnostics]
    assert codes == ["T005", "T003"]
    stale = analysis.diagnostics[0]
    assert stale.severity == Severity.WARNING
    assert "was measured on h100 for a different request (measured for matmul 32x64x64 bfloat16" in stale.message
    assert [c.status for c in analysis.checks] == ["skip"]


def test_a_new_call_elsewhere_is_missing_not_stale(cache: MeasurementCache) -> None:
    measured(cache, draft(MATMUL), "h100")
    analysis = analyse(draft(MATMUL.replace("bf16[64, 64]", "bf16[64, 128]")), cache)
    assert [d.code for d in analysis.diagnostics] == ["T003"]


def test_a_noisy_measurement_warns_and_gives_no_verdict_but_keeps_its_cv(cache: MeasurementCache) -> None:
    text = draft(MATMUL, "t.median ≈ 5 ms", "t.cv > 0.2")
    measured(cache, text, "h100", cv=0.3)
    analysis = analyse(text, cache)
    assert [d.code for d in analysis.diagnostics] == ["T004", "T003"]
    assert analysis.diagnostics[0].message.startswith("noisy measurement: CV 0.30 > 0.1 over 20 samples on h100")
    assert [c.status for c in analysis.checks] == ["skip", "pass"]


def test_a_function_measurement_is_keyed_by_its_blocks_code(cache: MeasurementCache) -> None:
    block = "```python calc\ndef f(x):\n    return x * 2\n```\n"
    text = block + draft("t = measure(f, f32[1024], h100)", "t.median ≈ 1 ms")
    measured(cache, text, "h100")
    assert [c.status for c in analyse(text, cache).checks] == ["pass"]  # untrusted: read, never run
    changed = analyse(text.replace("x * 2", "x * 3"), cache)
    assert "T005" in [d.code for d in changed.diagnostics]


@pytest.mark.parametrize(
    ("call", "code", "message"),
    [
        ("measure_matmul(bf16[4, 8], bf16[4, 8])", "U006", "the shapes must be dtype[B, D] and the same dtype[D, F]"),
        ("measure_matmul(bf16[4, 8])", "N005", "measure_matmul takes two shapes"),
        ("measure_copy(3 s)", "U006", "the size must be a number of bytes"),
        ("measure_collective(broadcast, 1 MiB, 8)", "U006", "the first argument is the collective"),
        ("measure_collective(all_gather, 1 MiB, 1)", "U006", "at least 2 devices"),
        ("measure(h100, f32[8])", "U006", "must be a function of a python calc block"),
        ("measure_matmul(tf32[4, 8], tf32[8, 8])", "T003", "untested: JAX has no dtype tf32"),
    ],
)
def test_wrong_arguments_say_what_is_expected(cache: MeasurementCache, call: str, code: str, message: str) -> None:
    analysis = analyse(draft(f"t = {call}"), cache)
    assert analysis.diagnostics[0].code == code
    assert message in analysis.diagnostics[0].message


def test_requests_name_what_is_measured_and_where(cache: MeasurementCache) -> None:
    recorder = Recorder(cache)
    analyse(draft("g = measure_collective(all_gather, 1 MiB, 8, tpu_v5e)"), recorder)  # type: ignore[arg-type]
    [request] = recorder.requests
    assert request.spec == {"op": "collective", "kind": "all_gather", "bytes": 2**20, "axis_size": 8}
    assert (request.device, request.call) == ("tpu_v5e", "measure_collective(all_gather, 1 MiB, 8, tpu_v5e)")


def test_a_caller_without_a_cache_leaves_measurements_untested() -> None:
    analysis = analyze_document(draft(MATMUL, "t.median < 1 s"), "draft.md", Config())
    assert [d.code for d in analysis.diagnostics] == ["T003", "T003"]  # the call, then the check using it
    assert "this caller has none" in analysis.diagnostics[0].message


def test_an_unreadable_cache_is_ignored_and_said_so(tmp_path: Path) -> None:
    (tmp_path / ".margin").mkdir()
    (tmp_path / ".margin" / "measurements.json").write_text("{ not json", "utf-8")
    analysis = analyse(draft(MATMUL), MeasurementCache(tmp_path))
    assert analysis.diagnostics[0].message == (
        "untested: no measurement for h100; .margin/measurements.json is not valid JSON; run margin measure"
    )
