"""The generated-code cache: reused across starts, never trusted blindly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import CodeType
from typing import Any

from server import code_cache
from tests.conftest import ROOT

WORK = """
import json, sys
from server import code_cache
code_cache.install()
from lsprotocol import types
from pygls.protocol import default_converter
converter = default_converter()
params = converter.structure({"textDocument": {"uri": "file:///a.md"}, "position": {"line": 1, "character": 2}},
                             types.HoverParams)
assert params.position == types.Position(1, 2) and repr(types.Hover("x")) == "Hover(contents='x', range=None)"
assert converter.unstructure(params)["position"] == {"line": 1, "character": 2}
print(json.dumps({**code_cache.stats, "saved": code_cache.save(),
                  "patched": "compile" in vars(sys.modules["attr._make"])}))
"""


def run_python(source: str, cache: Path, **env: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "MARGIN_CACHE_DIR": str(cache), **env},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cache_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("generated-code.*.marshal"))


def read_entries(path: Path) -> dict[bytes, object]:
    """The cache file's entries by key, each unmarshalled as a lookup would."""
    return {key: code_cache._unpacked(packed) for key, packed in code_cache._read_packed(path).items()}


def test_a_second_start_compiles_nothing(tmp_path: Path) -> None:
    first = run_python(WORK, tmp_path)
    assert first["hits"] == 0 and first["misses"] > 500 and first["saved"] is True  # type: ignore[operator]
    (written,) = cache_files(tmp_path)
    assert written.stat().st_mode & 0o077 == 0  # like __pycache__, only this user writes code we run
    second = run_python(WORK, tmp_path)
    assert second["hits"] == first["misses"] and second["misses"] == 0 and second["saved"] is False


def test_a_corrupt_or_foreign_cache_is_ignored_and_replaced(tmp_path: Path) -> None:
    run_python(WORK, tmp_path)
    (path,) = cache_files(tmp_path)
    good = path.read_bytes()
    for bad in (b"", b"garbage", good[: len(good) // 2], good.replace(b"margin-code-cache", b"other-code-cache!")):
        path.write_bytes(bad)
        result = run_python(WORK, tmp_path)
        assert result["hits"] == 0 and result["misses"] > 500 and result["saved"] is True  # type: ignore[operator]
        assert run_python(WORK, tmp_path)["misses"] == 0


def test_stale_entries_are_dropped_once_the_cache_grows_too_big(tmp_path: Path) -> None:
    # As after upgrading attrs or cattrs: the file holds many entries this version never uses.
    stale = """
import json
from server import code_cache
code_cache.install()
for i in range(code_cache.MAX_ENTRIES + 10):
    code_cache.cached_compile(f"x = {i}", "<stale>", "exec")
print(json.dumps({"saved": code_cache.save()}))
"""
    assert run_python(stale, tmp_path)["saved"] is True
    (path,) = cache_files(tmp_path)
    assert len(read_entries(path)) > code_cache.MAX_ENTRIES
    upgraded = WORK.replace(
        "print(json.dumps(", "code_cache.cached_compile('y = 1', '<new>', 'exec')\nprint(json.dumps("
    )
    first = run_python(upgraded, tmp_path)
    assert first["saved"] is True and first["misses"] > 500  # type: ignore[operator]
    kept = read_entries(path)
    assert len(kept) == first["misses"] and code_cache._key("x = 1", "<stale>", "exec") not in kept  # stale ones gone
    assert run_python(WORK, tmp_path)["misses"] == 0  # and what this version uses is kept


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    result = run_python(WORK, tmp_path, MARGIN_CODE_CACHE="0")
    assert result == {**dict.fromkeys(code_cache.stats, 0), "saved": False, "patched": False}
    assert cache_files(tmp_path) == []


def test_a_relative_cache_folder_is_never_used(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from server import code_cache

    monkeypatch.delenv("MARGIN_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # invalid per the XDG spec: ignored
    assert code_cache.cache_file() == tmp_path / ".cache" / "margin" / code_cache.cache_file().name  # type: ignore[union-attr]
    monkeypatch.setenv("MARGIN_CACHE_DIR", "relative-cache")
    assert code_cache.cache_file() is None
    work = tmp_path / "editor-cwd"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + textwrap.dedent(WORK)],
        cwd=work, capture_output=True, text=True, timeout=120, env={**os.environ, "MARGIN_CACHE_DIR": "relative-cache"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {**dict.fromkeys(code_cache.stats, 0), "saved": False, "patched": False}
    assert list(work.iterdir()) == []


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_the_language_server_writes_the_cache_and_reuses_it(tmp_path: Path) -> None:
    session = b"".join(
        frame(m)
        for m in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        )
    )
    env = {**os.environ, "MARGIN_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "server", "lsp"]
    first = subprocess.run(command, cwd=ROOT, input=session, capture_output=True, timeout=120, env=env)
    assert first.returncode == 0 and b'"id": 2' in first.stdout, first.stderr
    (path,) = cache_files(tmp_path)
    before = path.stat().st_mtime_ns, path.read_bytes()
    second = subprocess.run(command, cwd=ROOT, input=session, capture_output=True, timeout=120, env=env)
    assert second.returncode == 0 and second.stdout.count(b"Content-Length") == first.stdout.count(b"Content-Length")
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before  # everything came from the cache


DATACLASSES = """
import dataclasses, json, typing
from server import code_cache
code_cache.install(protocol=False)
@dataclasses.dataclass(frozen=True, order=True)
class Point:
    x: int
    tags: "typing.List[str]" = dataclasses.field(default_factory=list, compare=False)
    z: float = 1.5
@dataclasses.dataclass(slots=True)
class Box:
    items: list = dataclasses.field(default_factory=list)
a, b, box = Point(1, ["t"]), Point(1, [], 2.0), Box()
box.items.append(a)
print(json.dumps({**code_cache.stats, "saved": code_cache.save(),
                  "facts": [repr(a), repr(box), a < b, a == Point(1), hash(a) == hash(Point(1)),
                            {k: repr(v) for k, v in Point.__init__.__annotations__.items()},
                            Point.__init__.__code__.co_filename, repr(Point.__init__.__defaults__)]}))
"""


def test_dataclasses_generated_code_comes_from_the_cache_and_behaves_the_same(tmp_path: Path) -> None:
    plain = run_python(DATACLASSES, tmp_path / "off", MARGIN_CODE_CACHE="0")
    first = run_python(DATACLASSES, tmp_path)
    second = run_python(DATACLASSES, tmp_path)
    assert plain["hits"] == plain["misses"] == 0 and first["hits"] == 0 and first["misses"] > 10  # type: ignore[operator]
    assert second["hits"] == first["misses"] and second["misses"] == 0 and second["saved"] is False
    # the same classes: annotations are objects (this module's `from __future__ import annotations` does not leak)
    assert first["facts"] == second["facts"] == plain["facts"]
    assert plain["facts"][5]["x"] == "<class 'int'>"  # type: ignore[index]


def test_margin_check_fills_the_cache_once_and_then_only_reads_it(tmp_path: Path) -> None:
    env = {**os.environ, "MARGIN_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "server", "check", "examples/"]
    first = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120, env=env)
    assert first.returncode == 0, first.stderr
    (path,) = cache_files(tmp_path)
    entries = read_entries(path)
    code = [entry for entry in entries.values() if isinstance(entry, CodeType)]
    assert len(code) > 200 and all(c.co_filename == "<string>" for c in code)  # Margin's own
    programs = [entry for entry in entries.values() if isinstance(entry, tuple)]
    assert len(programs) > 50  # the regular expressions its modules compile as they load
    packaged = sorted((ROOT / "scaling_core").glob("*/data/**/*.toml"))
    assert sum(isinstance(entry, dict) for entry in entries.values()) == len(packaged) == 11  # units and chips
    before = path.stat().st_mtime_ns
    second = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120, env=env)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
    assert path.stat().st_mtime_ns == before  # nothing new compiled: nothing written


PATTERNS = """
import json, re, sys
from server import code_cache
code_cache.install(protocol=False)
with code_cache.loading_modules():
    import server.cli
    import server.lsp.long_join  # a pattern of lone surrogates
patterns = {id(value): value for name, module in list(sys.modules.items()) if name.startswith(("scaling_core", "server"))
            for value in vars(module).values() if isinstance(value, re.Pattern)}
# A pattern equals another when its flags, text and whole program are the same (_sre's comparison).
fresh = [p == re._compiler.compile(p.pattern, p.flags) for p in patterns.values()]
print(json.dumps({**code_cache.stats, "saved": code_cache.save(), "patterns": len(fresh), "same": all(fresh)}))
"""


def test_regular_expressions_compiled_as_modules_load_come_from_the_cache_the_same(tmp_path: Path) -> None:
    plain = run_python(PATTERNS, tmp_path / "off", MARGIN_CODE_CACHE="0")
    first = run_python(PATTERNS, tmp_path)
    second = run_python(PATTERNS, tmp_path)
    assert plain["regex_misses"] == plain["regex_hits"] == 0 and first["regex_hits"] == 0
    assert first["regex_misses"] > 50 and first["saved"] is True  # type: ignore[operator]
    assert second["regex_hits"] == first["regex_misses"] and second["regex_misses"] == 0 and second["saved"] is False
    assert second["patterns"] == first["patterns"] == plain["patterns"] > 40  # type: ignore[operator]
    assert plain["same"] is first["same"] is second["same"] is True


def test_a_program_the_regex_engine_refuses_is_compiled_again(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import re

    monkeypatch.setenv("MARGIN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(code_cache, "_table", {})
    monkeypatch.setattr(code_cache, "_added", {})
    text = r"(?P<word>[a-z]+) refused-program-\d+"
    key = code_cache.regex_key(text, 0)  # re.compile's flags, as re hands them to its compiler
    code_cache._table[key] = (re.UNICODE, [17, 4, 0, 0], 1, {"word": 1}, (None, "word"))  # not a valid program
    hits = code_cache.stats["regex_hits"]
    # A module's body, as it loads: its patterns are kept; one a function makes (from what it was given) is not.
    body = (
        f"import re\nPATTERN = re.compile({text!r})\n\ndef glob(t):\n    return re.compile(t + '-made-by-a-function')\n"
    )
    module: dict[str, Any] = {}
    with code_cache.loading_modules():
        exec(compile(body, "<a module>", "exec"), module)
        made = module["glob"]("settings-4417")
    after = re.compile(r"compiled-after-loading-\d+")
    pattern = module["PATTERN"]
    assert pattern.fullmatch("abc refused-program-42")["word"] == "abc"  # type: ignore[index]
    assert pattern == re._compiler.compile(text, re.UNICODE)  # type: ignore[attr-defined]
    assert code_cache.stats["regex_hits"] == hits and isinstance(code_cache._added[key], tuple)  # compiled, kept anew
    assert made.fullmatch("settings-4417-made-by-a-function") and after.pattern
    assert list(code_cache._added) == [key]  # neither the function's pattern nor one compiled after the block
    assert re._compiler.compile is not code_cache._cached_regex  # type: ignore[attr-defined]


def test_packaged_data_is_parsed_once_then_read_from_the_cache(tmp_path: Path) -> None:
    env = {**os.environ, "MARGIN_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "server", "hardware"]
    plain = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120, env={**env, "MARGIN_CODE_CACHE": "0"})
    first = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120, env=env)
    (path,) = cache_files(tmp_path)
    assert sum(isinstance(entry, dict) for entry in read_entries(path).values()) == 11
    book = tmp_path / "book"  # no project file here, whose settings tomllib would read
    book.mkdir()
    script = f"""
import contextlib, io, json, sys
sys.path.insert(0, {str(ROOT)!r})
from server import code_cache
code_cache.install(protocol=False)
with code_cache.loading_modules():
    from server import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    cli.main(["hardware"])
print(json.dumps({{**code_cache.stats, "tomllib": "tomllib" in sys.modules, "out": out.getvalue()}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=book, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    second = json.loads(done.stdout)
    assert plain.returncode == first.returncode == 0 and plain.stdout.count(b"\n") > 10, plain.stderr
    assert plain.stdout.decode() == first.stdout.decode() == second["out"]  # the same chips, field for field
    assert second["data_hits"] == 11 and second["tomllib"] is False  # nothing parsed: tomllib never loaded


LAZY = """
import json, marshal
from server import code_cache
code_cache.install(protocol=False)
keys = [code_cache._key(f"x_{n} = {n}", "<kept>", "exec") for n in range(3)]
read = [type(code_cache._table.get(key)).__name__ for key in keys]  # as the file was read
if "MODE" == "corrupt":
    code_cache._table[keys[2]] = marshal.dumps("not an entry")
space = {}
for n in range(3):
    exec(code_cache.cached_compile(f"x_{n} = {n}", "<kept>", "exec"), space)
    if n == 0:
        after_one = [type(code_cache._table.get(key)).__name__ for key in keys]
saved = code_cache.save() if "MODE" == "save" else None
print(json.dumps({"read": read, "after_one": after_one, "values": [space[f"x_{n}"] for n in range(3)],
                  "hits": code_cache.stats["hits"], "misses": code_cache.stats["misses"], "saved": saved}))
"""


def test_each_entry_is_marshalled_on_its_own_and_read_when_first_looked_up(tmp_path: Path) -> None:
    first = run_python(LAZY.replace("MODE", "save"), tmp_path)
    assert (first["misses"], first["values"], first["saved"]) == (3, [0, 1, 2], True)
    (path,) = cache_files(tmp_path)
    packed = code_cache._read_packed(path)
    assert len(packed) >= 3 and all(type(entry) is bytes for entry in packed.values())  # one marshal each
    again = run_python(LAZY.replace("MODE", "read"), tmp_path)
    assert again["read"] == ["bytes"] * 3  # as read from the file, nothing unmarshalled yet
    assert again["after_one"] == ["code", "bytes", "bytes"]  # the one looked up
    assert (again["hits"], again["misses"], again["values"]) == (3, 0, [0, 1, 2])
    corrupt = run_python(LAZY.replace("MODE", "corrupt"), tmp_path)
    assert (corrupt["hits"], corrupt["misses"], corrupt["values"]) == (2, 1, [0, 1, 2])  # compiled again
