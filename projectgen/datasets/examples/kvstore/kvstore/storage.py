"""Storage backends: where a KVStore keeps its data.

A backend stores one JSON-compatible dict as a whole: `read()` returns a fresh
copy of it and `write(data)` replaces it.
"""
from __future__ import annotations

import os
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from .codec import decode, encode
from .errors import SerializationError, StorageError


class Storage(ABC):
    """Interface of every storage backend."""

    @abstractmethod
    def read(self) -> dict[str, Any]:
        """Return a fresh copy of the stored data ({} when nothing was written yet)."""

    @abstractmethod
    def write(self, data: dict[str, Any]) -> None:
        """Replace the stored data with `data`."""

    def close(self) -> None:
        """Release any resources held by the backend (nothing by default)."""


class MemoryStorage(Storage):
    """Keeps the data in memory, as JSON text, so reads never alias earlier writes."""

    def __init__(self) -> None:
        self._text: str | None = None

    def read(self) -> dict[str, Any]:
        return {} if self._text is None else decode(self._text)

    def write(self, data: dict[str, Any]) -> None:
        if not isinstance(data, dict):
            raise TypeError(f"storage data must be a dict, not {type(data).__name__}")
        self._text = encode(data)


class JSONFileStorage(Storage):
    """Keeps the data in a JSON file, replaced atomically on every write."""

    def __init__(self, path: str | os.PathLike[str], *, indent: int | None = None) -> None:
        self.path = Path(path)
        self.indent = indent

    def read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        if not text.strip():
            return {}
        try:
            data = decode(text)
        except SerializationError as exc:
            raise StorageError(f"{self.path} is corrupt: {exc}") from exc
        if not isinstance(data, dict):
            raise StorageError(f"{self.path} is corrupt: the top-level JSON value must be an object")
        return data

    def write(self, data: dict[str, Any]) -> None:
        if not isinstance(data, dict):
            raise TypeError(f"storage data must be a dict, not {type(data).__name__}")
        text = encode(data, indent=self.indent)  # fails before the file is touched
        tmp_name: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, self.path)
            tmp_name = None
        except OSError as exc:
            raise StorageError(f"cannot write {self.path}: {exc}") from exc
        finally:
            if tmp_name is not None and os.path.exists(tmp_name):
                os.unlink(tmp_name)
