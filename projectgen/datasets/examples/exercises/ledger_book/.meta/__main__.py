"""python -m ledger_book FILE: the balance and the total per category."""
import sys

from .entries import parse_entry
from .ledger import Ledger, format_cents


def main(argv):
    ledger = Ledger()
    with open(argv[0], encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                ledger.add(parse_entry(line))
    print(f"balance: {format_cents(ledger.balance())}")
    for category, cents in ledger.totals().items():
        print(f"{category}: {format_cents(cents)}")


if __name__ == "__main__":
    main(sys.argv[1:])
