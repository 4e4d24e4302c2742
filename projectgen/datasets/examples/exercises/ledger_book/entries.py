"""One ledger line."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    date: str
    amount_cents: int
    category: str


def parse_entry(line):
    pass
