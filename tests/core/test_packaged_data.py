"""The engine's data files: read from the package's folder, or through importlib.resources from a zip."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from scaling_core import packaged_data
from tests.conftest import ROOT


def test_data_files_are_read_from_the_package_folder() -> None:
    chips = sorted(path.name for path in (ROOT / "scaling_core" / "hardware" / "data" / "chips").glob("*.toml"))
    assert packaged_data.file_names("scaling_core.hardware", "data/chips", ".toml") == chips and len(chips) == 10
    units = (ROOT / "scaling_core" / "units" / "data" / "units.toml").read_text("utf-8")
    assert packaged_data.read_text("scaling_core.units", "data/units.toml") == units


def test_a_package_in_a_zip_is_read_through_importlib_resources(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("zipped_data_package/__init__.py", "")
        out.writestr("zipped_data_package/data/b.toml", 'name = "b"\n')
        out.writestr("zipped_data_package/data/a.toml", 'name = "á"\nsize = 1.5\n')
        out.writestr("zipped_data_package/data/notes.txt", "not data")
    monkeypatch.syspath_prepend(str(archive))
    import zipped_data_package  # type: ignore[import-not-found]

    try:
        assert not Path(zipped_data_package.__file__).is_file()  # it lies in the archive
        assert packaged_data.file_names("zipped_data_package", "data", ".toml") == ["a.toml", "b.toml"]
        assert packaged_data.read_text("zipped_data_package", "data/a.toml") == 'name = "á"\nsize = 1.5\n'
        assert packaged_data.read_toml("zipped_data_package", "data/a.toml") == {"name": "á", "size": 1.5}
    finally:
        del sys.modules["zipped_data_package"]


class _Remembered:
    """A cache of parsed data that counts what it is asked."""

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, Any]] = {}
        self.asked = 0

    def get(self, text: str) -> dict[str, Any] | None:
        self.asked += 1
        return self.kept.get(text)

    def keep(self, text: str, data: dict[str, Any]) -> None:
        self.kept[text] = data


@pytest.fixture
def remembered() -> Any:
    cache = _Remembered()
    packaged_data.keep_parsed_data_in(cache)
    yield cache
    packaged_data.keep_parsed_data_in(None)


def test_parsed_data_comes_from_the_process_cache_once_kept(remembered: _Remembered) -> None:
    first = packaged_data.read_toml("scaling_core.hardware", "data/chips/h100.toml")
    assert remembered.asked == 1 and list(remembered.kept.values()) == [first] and first["title"]
    remembered.kept = {text: {"title": "from the cache"} for text in remembered.kept}
    assert packaged_data.read_toml("scaling_core.hardware", "data/chips/h100.toml") == {"title": "from the cache"}
    packaged_data.keep_parsed_data_in(None)
    assert packaged_data.read_toml("scaling_core.hardware", "data/chips/h100.toml") == first  # parsed again
