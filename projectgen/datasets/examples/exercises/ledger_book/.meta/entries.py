"""One ledger line."""
import re
from dataclasses import dataclass

_LINE = re.compile(r"^(\d{4}-\d{2}-\d{2}) ([+-])(\d+)(?:\.(\d{1,2}))? (\w+)$")


@dataclass(frozen=True)
class Entry:
    date: str
    amount_cents: int
    category: str


def parse_entry(line):
    match = _LINE.match(line.strip())
    if match is None:
        raise ValueError(f"not a ledger line: {line!r}")
    date, sign, units, decimals, category = match.groups()
    cents = int(units) * 100 + int((decimals or "0").ljust(2, "0"))
    return Entry(date, -cents if sign == "-" else cents, category)
