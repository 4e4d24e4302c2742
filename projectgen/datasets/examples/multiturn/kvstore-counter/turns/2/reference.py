"""Integer counters kept in a KVStore, optionally within a time window."""
from __future__ import annotations

import math

from .store import KVStore


def _check_amount(by: object) -> int:
    if isinstance(by, bool) or not isinstance(by, int):
        raise TypeError(f"a counter moves by an int, not {by!r}")
    return by


def _check_ttl(ttl: object) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
        raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
    return float(ttl)


class Counter:
    """Counts stored as plain ints under their keys in `store`; a count may expire (a fixed window)."""

    def __init__(self, store: KVStore) -> None:
        self._store = store

    def get(self, key: str) -> int:
        return self._store.get(key, 0)

    def incr(self, key: str, by: int = 1, *, ttl: float | None = None) -> int:
        amount, window = _check_amount(by), _check_ttl(ttl)
        current = self._store.get(key, None)
        if current is None:
            value, expires_in = amount, window
        else:
            value, expires_in = current + amount, self._store.ttl(key)
        self._store.set(key, value, ttl=expires_in)
        return value
