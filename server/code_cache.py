"""A disk cache for what every start would otherwise redo the same way: the bytecode that attrs, cattrs and
dataclasses generate, the programs of the regular expressions Margin's modules compile, its packaged data parsed.

``lsprotocol.types`` defines ~560 attrs classes; attrs writes Python source for
each class's methods and compiles it, and cattrs does the same for each
message type's (un)structuring functions.  ``compile`` is ~40% of the language
server's import time (measured: importing ``lsprotocol.types`` takes 268 ms
compiling, 157 ms with this cache).  Margin's own ~90 dataclasses do the same
through :mod:`dataclasses` (~330 functions: measured on a 2-core machine, 37-52
ms of a 125 ms import of ``margin check``'s modules, and ~30 ms of its start
with this cache).  The generated source is the same on every start, so its
code objects are kept on disk with :mod:`marshal`, as Python keeps ``.pyc``
files, and looked up by a hash of (source, file name, mode).  Each entry is
marshalled on its own and unmarshalled when first looked up: a save then
never holds the interpreter lock for long (the whole table in one call took
~16 ms to read back and ~11 ms to write, while the language server's event
loop waited), and what a start does not ask for stays bytes.

Correctness does not depend on the cache: a lookup miss compiles as usual, an
unreadable, foreign or corrupt file is ignored, and the file is written
atomically (temporary file, then rename) with the interpreter's bytecode magic
number in its header; once it holds more than :data:`MAX_ENTRIES`, a save
keeps only what the saving process used (old attrs/cattrs versions' code goes).
``MARGIN_CODE_CACHE=0`` turns it off;
``MARGIN_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/margin`` or
``~/.cache/margin``; a relative folder turns the cache off).  Like ``__pycache__``, the file holds code the server
runs, so it is written only by this user (mode 0600).

The regular expressions Margin's modules compile as they load go through the
same file (:func:`loading_modules`): Python's ``re`` parses a pattern and builds
its matching program in Python (measured: ~7.7 ms of a 45 ms import of ``margin
check``'s modules, 74 patterns), and the program is a plain list of numbers.
The cache keeps what ``re`` hands ``_sre.compile`` (flags, program, groups) and
makes the pattern from it, which checks the program as it does any other; one
it refuses is compiled as usual.  Only patterns a module's own body compiles
while modules load are kept: never one a function makes, from a user's text
or settings (a glob) or anything else.  The engine's packaged TOML (units and
chips) is kept as parsed too, by its text (~2.3 ms to parse and ~1.5 ms to
load ``tomllib``, every start).
"""

from __future__ import annotations

import builtins
import importlib.util
import marshal
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from re import _compiler as _regex_compiler  # type: ignore[attr-defined]  # re's own compiler (not in typeshed)

try:  # hashlib's own BLAKE2, without loading OpenSSL as ``import hashlib`` does (~4 ms of every start)
    from _blake2 import blake2b
except ImportError:  # an interpreter without the module: hashlib has BLAKE2 from OpenSSL then
    from hashlib import blake2b
from types import CodeType
from typing import Any

_HEADER = b"margin-code-cache-2\0" + importlib.util.MAGIC_NUMBER
_lock = threading.Lock()
#: What the file holds by key: generated code, a regular expression's program (the arguments ``re`` passed
#: ``_sre.compile`` after the pattern, as plain data), or a packaged TOML file's data.
Entry = CodeType | tuple[object, ...] | dict[str, Any]
#: Entries by key: as read from the file (each one's marshalled bytes) until first looked up (:func:`_entry`).
_table: dict[bytes, Entry | bytes] = {}
_added: dict[bytes, Entry] = {}
_used: set[bytes] = set()
stats = {"hits": 0, "misses": 0, "regex_hits": 0, "regex_misses": 0, "data_hits": 0}
#: The regular expression engine that ``re``'s compiler hands its programs to.
_SRE: Any = _regex_compiler._sre
#: Above this many entries (a start-up uses ~600), a save keeps only what this process used:
#: entries for old attrs/cattrs versions would otherwise accumulate forever.
MAX_ENTRIES = 4000


def cache_file() -> Path | None:
    """Where the cache lives, or None when it is turned off."""
    if os.environ.get("MARGIN_CODE_CACHE", "1") == "0":
        return None
    folder = os.environ.get("MARGIN_CACHE_DIR")
    if not folder:
        xdg = os.environ.get("XDG_CACHE_HOME", "")  # a relative one is invalid (XDG Base Directory spec)
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "margin")
    if not os.path.isabs(folder):
        return None  # never a cache relative to wherever the editor started us (or no home at all)
    return Path(folder) / f"generated-code.{sys.implementation.cache_tag}.marshal"


def _key(source: object, filename: object, mode: object) -> bytes | None:
    if not isinstance(source, str) or not isinstance(filename, str) or not isinstance(mode, str):
        return None
    return _digest(source, filename, mode)


def _digest(source: str, filename: str, mode: str) -> bytes:
    # surrogatepass: a pattern may name lone surrogates (server/lsp/long_join.py's); other text encodes as UTF-8
    return blake2b("\0".join((source, filename, mode)).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _entry(key: bytes) -> Entry | None:
    """What the cache holds under ``key``, unmarshalled on the first look (None: nothing, or not an entry)."""
    found = _table.get(key)
    if type(found) is bytes:
        found = _unpacked(found)
        if found is None:
            _table.pop(key, None)
        else:
            _table[key] = found
    return found  # type: ignore[return-value]


def _unpacked(packed: bytes) -> Entry | None:
    """An entry from its marshalled bytes, or None for bytes that are not one."""
    try:
        entry = marshal.loads(packed)
    except (EOFError, ValueError, TypeError):
        return None
    return entry if isinstance(entry, CodeType | tuple | dict) else None


def _compiled(key: bytes | None, compile_source: Callable[[], CodeType]) -> CodeType:
    """The code cached under ``key``, else ``compile_source()``'s, kept under ``key`` (None: not cached)."""
    cached = _entry(key) if key is not None else None
    if type(cached) is CodeType:
        stats["hits"] += 1
        _used.add(key)  # type: ignore[arg-type]
        return cached
    code = compile_source()
    if key is not None:
        stats["misses"] += 1
        with _lock:
            _table[key] = _added[key] = code
    return code


def cached_compile(source: object, filename: object, mode: object, *args: object, **kwargs: object) -> CodeType:
    """``compile``, answered from the cache when the same source was compiled before."""
    key = None if args or kwargs else _key(source, filename, mode)
    return _compiled(key, lambda: builtins.compile(source, filename, mode, *args, **kwargs))  # type: ignore[call-overload]


def cached_exec(source: object, globals: dict[str, object] | None = None, locals: object = None, /) -> None:  # noqa: A002
    """``exec`` for the functions :mod:`dataclasses` generates: their source compiled once, then from the cache.

    Compiled as ``exec`` compiles a string in a module with no ``__future__``
    imports (``dont_inherit``: this module's ``annotations`` must not turn the
    generated ``__init__``'s annotations into strings), in the globals of the
    caller when it passes none, as ``exec`` would.
    """
    if globals is None:
        globals = sys._getframe(1).f_globals  # noqa: A001 - exec's own default
    if isinstance(source, str):
        text = source
        source = _compiled(
            _key(text, "<string>", "exec"), lambda: builtins.compile(text, "<string>", "exec", dont_inherit=True)
        )
    builtins.exec(source, globals, locals)  # type: ignore[arg-type]


def _plain(value: object) -> object:
    """``value`` as data :mod:`marshal` writes (``re``'s opcodes are int subclasses); TypeError if it cannot be."""
    if value is None or type(value) in (str, bool, float):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    raise TypeError(f"not plain data: {type(value).__name__}")


class _Recorder:
    """Stands in for ``_sre`` inside ``re``'s compiler for one pattern: keeps the arguments of ``compile``."""

    def __init__(self) -> None:
        self.arguments: tuple[object, ...] | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(_SRE, name)

    def compile(self, *arguments: object) -> re.Pattern[str]:
        self.arguments = arguments
        return _SRE.compile(*arguments)  # type: ignore[no-any-return]


def regex_key(pattern: str, flags: int) -> bytes:
    """The key of a pattern's program (``re``'s flags as passed to its compiler, and the engine's version)."""
    return _digest(pattern, "<regex>", f"{int(flags)} {_SRE.MAGIC}")


#: The import system's module, whose ``_call_with_frames_removed`` runs a compiled module's body.
_IMPORT = "importlib._bootstrap"


def _in_module_body() -> bool:
    """Whether the code that asked ``re`` for a pattern is a module's own body (the pattern is then part of the
    module, not made from what a function was given).

    A compiled module (docs/cli.md, "A compiled engine") runs its body with no frame of its own: the frame
    under it is the import system's, which runs module bodies and nothing else.
    """
    frame = sys._getframe(2)  # _cached_regex's caller: re's own functions first
    while frame is not None and frame.f_globals.get("__name__") == "re":
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return False
    code = frame.f_code.co_name
    return code == "<module>" or code == "_call_with_frames_removed" and frame.f_globals.get("__name__") == _IMPORT


def _cached_regex(pattern: object, flags: int = 0, *, _compile: Callable[..., re.Pattern[str]]) -> re.Pattern[str]:
    """``re``'s compiler (``_compile``), answered from the cache for a pattern a module body compiled before."""
    if type(pattern) is not str or flags & re.DEBUG or not _in_module_body():
        return _compile(pattern, flags)
    key = regex_key(pattern, flags)
    entry = _entry(key)
    if type(entry) is tuple:
        try:
            made = _SRE.compile(pattern, *entry)
        except (TypeError, ValueError, RuntimeError, OverflowError):  # a program _sre refuses: compiled as usual
            pass
        else:
            stats["regex_hits"] += 1
            _used.add(key)
            return made  # type: ignore[no-any-return]
    recorder = _Recorder()
    _regex_compiler._sre = recorder
    try:
        made = _compile(pattern, flags)
    finally:
        _regex_compiler._sre = _SRE
    if recorder.arguments is not None and recorder.arguments[0] is pattern:
        try:
            entry = _plain(recorder.arguments[1:])  # type: ignore[assignment]
        except TypeError:
            return made
        stats["regex_misses"] += 1
        with _lock:
            _table[key] = _added[key] = entry  # type: ignore[assignment]
    return made


class _ParsedData:
    """The engine's packaged TOML as parsed before (``scaling_core.packaged_data.ParsedData``), by its text."""

    def get(self, text: str) -> dict[str, Any] | None:
        key = _digest(text, "<toml>", "")
        found = _entry(key)
        if type(found) is not dict:
            return None
        stats["data_hits"] += 1
        _used.add(key)
        return found

    def keep(self, text: str, data: dict[str, Any]) -> None:
        try:
            plain = _plain(data)
        except TypeError:  # a date, say: parsed again next time
            return
        key = _digest(text, "<toml>", "")
        with _lock:
            _table[key] = _added[key] = plain  # type: ignore[assignment]


@contextmanager
def loading_modules() -> Iterator[None]:
    """Modules loaded in this block compile the regular expressions of their own bodies through the cache; once
    the engine is loaded (here or before), it parses its packaged data through it (``scaling_core.packaged_data``).

    A no-op when the cache is off.  Only one thread should load modules in such a block at a time.
    """
    if cache_file() is None:
        yield
        return
    original = _regex_compiler.compile
    _regex_compiler.compile = partial(_cached_regex, _compile=original)
    try:
        yield
    finally:
        _regex_compiler.compile = original
        packaged = sys.modules.get("scaling_core.packaged_data")
        if packaged is not None:
            packaged.keep_parsed_data_in(_ParsedData())


def _read_packed(path: Path) -> dict[bytes, bytes]:
    """The file's entries by key, each still marshalled (nothing, for a file that is not such a cache)."""
    try:
        data = path.read_bytes()
        if not data.startswith(_HEADER):
            return {}
        table = marshal.loads(data[len(_HEADER) :])  # bytes objects alone: a copy of the file, at C speed
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if type(k) is bytes and type(v) is bytes}


def install(*, protocol: bool = True) -> None:
    """Load the cache and route dataclasses' ``exec`` through it, and with ``protocol`` attrs' and cattrs' ``compile``.

    Call before importing the modules whose classes it should serve (Margin's
    own, and ``lsprotocol`` for the language server: ``protocol=False`` for the
    other commands, which do not load attrs); a no-op when the cache is off.
    """
    path = cache_file()
    if path is None:
        return
    _table.update(_read_packed(path))
    import dataclasses

    # Each module calls the builtin by its global name; a module global shadows it.
    dataclasses.exec = cached_exec  # type: ignore[attr-defined]
    if protocol:
        import attr._make
        import cattrs.gen

        attr._make.compile = cached_compile  # type: ignore[attr-defined]
        cattrs.gen.compile = cached_compile  # type: ignore[attr-defined]


def save() -> bool:
    """Write code compiled since start-up (merged with the file's); True if written."""
    path = cache_file()
    with _lock:
        added = dict(_added)
        _added.clear()
    if path is None or not added:
        return False
    import tempfile  # here, not at start-up: with shutil and its compressors it is ~4 ms of the server's start

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Each entry marshalled on its own: short calls, between which the event loop gets the lock.
        packed = {key: marshal.dumps(entry) for key, entry in added.items()}  # type: ignore[arg-type]  # plain data
        merged = {**_read_packed(path), **packed}
        if len(merged) > MAX_ENTRIES:
            merged = {key: code for key, code in merged.items() if key in _used or key in added}
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".generated-code-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(_HEADER + marshal.dumps(merged))
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        import logging

        logging.getLogger(__name__).info("code cache not written: %s", error)
        return False
    return True
