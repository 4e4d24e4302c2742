"""Integer counters kept in a KVStore."""
from __future__ import annotations

from .store import KVStore


def _check_amount(by: object) -> int:
    if isinstance(by, bool) or not isinstance(by, int):
        raise TypeError(f"a counter moves by an int, not {by!r}")
    return by


class Counter:
    """Counts stored as plain ints under their keys in `store`."""

    def __init__(self, store: KVStore) -> None:
        self._store = store

    def get(self, key: str) -> int:
        return self._store.get(key, 0)

    def incr(self, key: str, by: int = 1) -> int:
        value = self.get(key) + _check_amount(by)
        self._store.set(key, value)
        return value
