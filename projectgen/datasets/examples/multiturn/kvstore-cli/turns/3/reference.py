"""Command-line interface: `python -m kvstore --file PATH COMMAND ...`."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .codec import decode, encode
from .errors import KeyNotFoundError
from .storage import JSONFileStorage
from .store import KVStore


def _format(value: object) -> str:
    return value if isinstance(value, str) else encode(value)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kvstore", description="Inspect and edit a kvstore JSON file.")
    parser.add_argument("--file", "-f", required=True, help="path of the JSON file holding the store")
    commands = parser.add_subparsers(dest="command", required=True)
    set_cmd = commands.add_parser("set", help="store a value")
    set_cmd.add_argument("key")
    set_cmd.add_argument("value")
    set_cmd.add_argument("--ttl", type=float, default=None, help="seconds until the key expires")
    set_cmd.add_argument("--json", action="store_true", dest="as_json", help="parse VALUE as JSON")
    commands.add_parser("get", help="print a value").add_argument("key")
    commands.add_parser("delete", help="remove a key").add_argument("key")
    commands.add_parser("list", help="print every live key and its value")
    args = parser.parse_args(argv)
    try:
        store = KVStore(JSONFileStorage(args.file))
        if args.command == "set":
            value = decode(args.value) if args.as_json else args.value
            store.set(args.key, value, ttl=args.ttl)
        elif args.command == "get":
            print(_format(store.get(args.key)))
        elif args.command == "delete":
            if not store.delete(args.key):
                raise KeyNotFoundError(args.key)
        else:
            for key, value in store.items():
                print(f"{key}\t{encode(value)}")
    except KeyNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
