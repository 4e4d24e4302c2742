"""An append-only JSONL ledger that lets long batch runs continue where they stopped.

Each finished unit of work appends one line under an exclusive file lock, so
parallel workers (threads or processes) never interleave partial lines; a line
cut short by a kill is ignored on reading, and that unit simply runs again.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projectgen.durable_files import append_line


class Ledger:
    """Records finished work items keyed by a string; reading tolerates a torn last line."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def clear(self) -> None:
        """Forget every record (a fresh start of the batch)."""
        self.path.unlink(missing_ok=True)

    def entries(self) -> list[dict[str, Any]]:
        """Every whole entry, oldest first."""
        if not self.path.exists():
            return []
        entries = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and "key" in entry:
                entries.append(entry)
        return entries

    def done(self) -> dict[str, dict[str, Any]]:
        """The latest entry for each key."""
        return {entry["key"]: entry for entry in self.entries()}

    def append(self, key: str, **record: Any) -> None:
        # One whole line under an exclusive lock, fsynced; a line torn by a kill is cut off first.
        append_line(self.path, json.dumps({"key": key, **record}, sort_keys=True), fsync=True)
