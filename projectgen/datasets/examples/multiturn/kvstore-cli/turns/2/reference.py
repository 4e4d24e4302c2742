"""Command-line interface: `python -m kvstore --file PATH COMMAND ...`."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .codec import encode
from .errors import KeyNotFoundError
from .storage import JSONFileStorage
from .store import KVStore


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kvstore", description="Inspect and edit a kvstore JSON file.")
    parser.add_argument("--file", "-f", required=True, help="path of the JSON file holding the store")
    commands = parser.add_subparsers(dest="command", required=True)
    set_cmd = commands.add_parser("set", help="store a value")
    set_cmd.add_argument("key")
    set_cmd.add_argument("value")
    commands.add_parser("get", help="print a value").add_argument("key")
    commands.add_parser("delete", help="remove a key").add_argument("key")
    commands.add_parser("list", help="print every live key and its value")
    args = parser.parse_args(argv)
    try:
        store = KVStore(JSONFileStorage(args.file))
        if args.command == "set":
            store.set(args.key, args.value)
        elif args.command == "get":
            print(store.get(args.key))
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
