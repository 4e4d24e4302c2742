import json
import os

import pytest

from kvstore import JSONFileStorage, MemoryStorage, SerializationError, Storage, StorageError


def test_memory_storage_starts_empty_and_returns_copies():
    with pytest.raises(TypeError):
        Storage()  # abstract
    assert isinstance(MemoryStorage(), Storage)
    storage = MemoryStorage()
    assert storage.read() == {}
    storage.write({"ns": {"k": {"value": [1], "expires_at": None}}})
    first = storage.read()
    first["ns"]["k"]["value"].append(2)
    assert storage.read() == {"ns": {"k": {"value": [1], "expires_at": None}}}


def test_json_file_storage_missing_or_empty_file_reads_empty(tmp_path):
    assert JSONFileStorage(tmp_path / "missing.json").read() == {}
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    assert JSONFileStorage(empty).read() == {}


def test_json_file_storage_writes_plain_json_and_creates_dirs(tmp_path):
    path = tmp_path / "sub" / "dir" / "db.json"
    storage = JSONFileStorage(path, indent=2)
    storage.write({"a": 1})
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1}
    assert storage.read() == {"a": 1}
    assert storage.path == path


@pytest.mark.parametrize("content", ["{broken", "[1, 2, 3]"])
def test_json_file_storage_corrupt_file_raises_storage_error(tmp_path, content):
    path = tmp_path / "db.json"
    path.write_text(content)
    with pytest.raises(StorageError):
        JSONFileStorage(path).read()


def test_json_file_storage_write_is_atomic(tmp_path):
    path = tmp_path / "db.json"
    storage = JSONFileStorage(path)
    storage.write({"a": 1})
    with pytest.raises(SerializationError):
        storage.write({"a": {1, 2}})
    assert storage.read() == {"a": 1}
    assert os.listdir(tmp_path) == ["db.json"]  # no temporary files left behind
