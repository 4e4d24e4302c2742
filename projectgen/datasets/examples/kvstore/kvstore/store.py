"""KVStore, the key-value store, and Transaction, its all-or-nothing variant.

Stored data layout (what the storage backend holds):
    {namespace: {key: {"value": <value>, "expires_at": <float seconds or null>}}}
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Iterator

from .codec import validate_value
from .errors import InvalidKeyError, KeyNotFoundError, TransactionError
from .storage import MemoryStorage, Storage

Clock = Callable[[], float]
_MISSING: Any = object()


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidKeyError(f"{what} must be a non-empty string, got {name!r}")
    return name


def _expired(entry: dict[str, Any], now: float) -> bool:
    expires_at = entry.get("expires_at")
    return expires_at is not None and now >= expires_at


class KVStore:
    """A namespaced key-value store with per-key time-to-live."""

    def __init__(self, storage: Storage | None = None, *, namespace: str = "default", clock: Clock | None = None) -> None:
        self._storage = storage if storage is not None else MemoryStorage()
        self._namespace = _check_name(namespace, "namespace")
        self._clock = clock if clock is not None else time.time

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def namespace_name(self) -> str:
        return self._namespace

    @property
    def clock(self) -> Clock:
        return self._clock

    # -- plumbing (Transaction overrides these) ---------------------------
    def _load(self) -> dict[str, Any]:
        return self._storage.read()

    def _save(self, data: dict[str, Any]) -> None:
        self._storage.write(data)

    def _live(self, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
        now = self._clock()
        entries = data.get(self._namespace, {})
        return {key: entry for key, entry in entries.items() if not _expired(entry, now)}

    # -- reads -------------------------------------------------------------
    def get(self, key: str, default: Any = _MISSING) -> Any:
        _check_name(key, "key")
        entry = self._live(self._load()).get(key)
        if entry is None:
            if default is _MISSING:
                raise KeyNotFoundError(key)
            return default
        return entry["value"]

    def has(self, key: str) -> bool:
        _check_name(key, "key")
        return key in self._live(self._load())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(key) and self.has(key)

    def keys(self) -> list[str]:
        return sorted(self._live(self._load()))

    def items(self) -> list[tuple[str, Any]]:
        live = self._live(self._load())
        return [(key, live[key]["value"]) for key in sorted(live)]

    def __len__(self) -> int:
        return len(self._live(self._load()))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def ttl(self, key: str) -> float | None:
        _check_name(key, "key")
        entry = self._live(self._load()).get(key)
        if entry is None:
            raise KeyNotFoundError(key)
        expires_at = entry["expires_at"]
        return None if expires_at is None else expires_at - self._clock()

    def namespaces(self) -> list[str]:
        data = self._load()
        now = self._clock()
        return sorted(name for name, entries in data.items() if any(not _expired(e, now) for e in entries.values()))

    # -- writes ------------------------------------------------------------
    def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        _check_name(key, "key")
        validate_value(value)
        expires_at = None
        if ttl is not None:
            if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
                raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
            expires_at = self._clock() + ttl
        data = self._load()
        data.setdefault(self._namespace, {})[key] = {"value": value, "expires_at": expires_at}
        self._save(data)

    def delete(self, key: str) -> bool:
        _check_name(key, "key")
        data = self._load()
        entries = data.get(self._namespace, {})
        entry = entries.pop(key, None)
        if entry is None:
            return False
        if not entries:
            del data[self._namespace]
        self._save(data)
        return not _expired(entry, self._clock())

    def purge_expired(self) -> int:
        data = self._load()
        entries = data.get(self._namespace, {})
        live = self._live(data)
        removed = len(entries) - len(live)
        if removed:
            if live:
                data[self._namespace] = live
            else:
                del data[self._namespace]
            self._save(data)
        return removed

    def clear(self) -> None:
        data = self._load()
        if data.pop(self._namespace, None) is not None:
            self._save(data)

    # -- views, transactions, lifecycle --------------------------------------
    def namespace(self, name: str) -> KVStore:
        return KVStore(self._storage, namespace=name, clock=self._clock)

    def transaction(self) -> Transaction:
        return Transaction(self)

    def close(self) -> None:
        self._storage.close()

    def __enter__(self) -> KVStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Transaction(KVStore):
    """A KVStore over a private working copy; commit() writes it back in one write()."""

    def __init__(self, store: KVStore) -> None:
        working = MemoryStorage()
        working.write(store.storage.read())
        super().__init__(working, namespace=store.namespace_name, clock=store.clock)
        self._target = store.storage
        self._state = "active"

    @property
    def state(self) -> str:
        """One of "active", "committed" or "rolled back"."""
        return self._state

    @property
    def active(self) -> bool:
        return self._state == "active"

    def _require_active(self) -> None:
        if not self.active:
            raise TransactionError(f"transaction already {self._state}")

    def _load(self) -> dict[str, Any]:
        self._require_active()
        return super()._load()

    def _save(self, data: dict[str, Any]) -> None:
        self._require_active()
        super()._save(data)

    def commit(self) -> None:
        self._require_active()
        self._target.write(self.storage.read())
        self._state = "committed"

    def rollback(self) -> None:
        self._require_active()
        self._state = "rolled back"

    def close(self) -> None:
        if self.active:
            self.rollback()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if self.active:
            if exc_type is None:
                self.commit()
            else:
                self.rollback()
