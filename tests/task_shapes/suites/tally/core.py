"""The Tally class."""
from __future__ import annotations

from collections.abc import Hashable


class Tally:
    """Counts of hashable items, in the order they were first added."""

    def __init__(self) -> None:
        self._counts: dict[Hashable, int] = {}

    def add(self, item: Hashable, n: int = 1) -> None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive int, got {n!r}")
        hash(item)  # TypeError for an unhashable item
        self._counts[item] = self._counts.get(item, 0) + n

    def count(self, item: Hashable) -> int:
        return self._counts.get(item, 0)

    def remove(self, item: Hashable) -> None:
        self._counts.pop(item, None)

    @property
    def total(self) -> int:
        return sum(self._counts.values())

    def most_common(self, k: int) -> list[tuple[Hashable, int]]:
        return sorted(self._counts.items(), key=lambda pair: -pair[1])[:k]
