"""Reading the data files packaged with the engine (``units/data``, ``hardware/data``): the only files it reads.

A package installed as files (pip, pipx, an editable install, a clone) is read
straight from its folder.  :mod:`importlib.resources` gives the same bytes but
loads ``tempfile``, ``shutil``, ``zipfile`` and its readers on every start
(measured: 1.5-2.5 ms of a ~155 ms ``margin check``, interleaved runs); it is
still what reads a package that Python loaded from elsewhere (a zip archive),
imported then.

Parsing the TOML files is ~2.3 ms of each start (and ``tomllib`` ~1.5 ms to
load), the same result every time: a process may keep what they parse to in a
cache of its own (:func:`keep_parsed_data_in`; the command line keeps it in
its code cache, ``server/code_cache.py``), looked up by the file's text.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Protocol


class ParsedData(Protocol):
    """A cache of parsed TOML, by the text parsed."""

    def get(self, text: str) -> dict[str, Any] | None:
        """What ``text`` parsed to before, else None."""

    def keep(self, text: str, data: dict[str, Any]) -> None:
        """Remember that ``text`` parses to ``data``."""


_parsed: ParsedData | None = None


def keep_parsed_data_in(cache: ParsedData | None) -> None:
    """Parse packaged TOML through ``cache`` from now on (None: parse each file whenever it is read)."""
    global _parsed
    _parsed = cache


def _folder(package: str) -> str | None:
    """The folder of an imported ``package``, where its files lie on disk; None if they do not."""
    location = getattr(sys.modules[package], "__file__", None)
    if not isinstance(location, str) or not os.path.isfile(location):
        return None
    return os.path.dirname(location)


def read_text(package: str, path: str) -> str:
    """The UTF-8 text of data file ``path`` (``/``-separated) of ``package`` (already imported)."""
    folder = _folder(package)
    if folder is None:
        from importlib import resources

        return resources.files(package).joinpath(path).read_text("utf-8")
    with open(os.path.join(folder, *path.split("/")), encoding="utf-8") as data:
        return data.read()


def file_names(package: str, path: str, suffix: str) -> list[str]:
    """The names of ``package``'s data files in folder ``path`` that end with ``suffix``, sorted."""
    folder = _folder(package)
    if folder is None:
        from importlib import resources

        names = [item.name for item in resources.files(package).joinpath(path).iterdir()]
    else:
        names = os.listdir(os.path.join(folder, *path.split("/")))
    return sorted(name for name in names if name.endswith(suffix))


def read_toml(package: str, path: str) -> dict[str, Any]:
    """Data file ``path`` of ``package`` parsed as TOML (from the process's cache when it has one)."""
    text = read_text(package, path)
    cache = _parsed
    data = cache.get(text) if cache is not None else None
    if data is None:
        import tomllib  # only when not cached: ~1.5 ms of a start

        data = tomllib.loads(text)
        if cache is not None:
            cache.keep(text, data)
    return data
