"""Integer counters kept in a KVStore, and their command line (`python -m kvstore.counter`)."""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence

from .errors import KVStoreError
from .storage import JSONFileStorage
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

    def incr_many(self, counts: Mapping[str, int]) -> dict[str, int]:
        """Add every amount in one transaction: all counts change, or none does."""
        with self._store.transaction() as transaction:
            together = Counter(transaction)
            return {key: together.incr(key, by) for key, by in counts.items()}

    def reset(self, key: str) -> int:
        value = self.get(key)
        self._store.delete(key)
        return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kvstore-counter", description="Counters in a kvstore JSON file.")
    parser.add_argument("--file", "-f", required=True, help="path of the JSON file holding the store")
    commands = parser.add_subparsers(dest="command", required=True)
    incr = commands.add_parser("incr", help="increment a count and print it")
    incr.add_argument("key")
    incr.add_argument("--by", type=int, default=1)
    incr.add_argument("--ttl", type=float, default=None, help="seconds until a new count expires")
    commands.add_parser("get", help="print a count").add_argument("key")
    commands.add_parser("reset", help="reset a count and print the count it had").add_argument("key")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    counter = Counter(KVStore(JSONFileStorage(args.file)))
    try:
        if args.command == "incr":
            print(counter.incr(args.key, args.by, ttl=args.ttl))
        elif args.command == "get":
            print(counter.get(args.key))
        else:
            print(counter.reset(args.key))
    except (KVStoreError, TypeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
