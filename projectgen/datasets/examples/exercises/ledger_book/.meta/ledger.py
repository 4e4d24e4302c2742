"""A ledger of entries."""


def format_cents(cents):
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), 100)
    return f"{sign}{units}.{rest:02d}"


class Ledger:
    def __init__(self):
        self.entries = []

    def add(self, entry):
        self.entries.append(entry)

    def balance(self):
        return sum(entry.amount_cents for entry in self.entries)

    def totals(self):
        sums = {}
        for entry in self.entries:
            sums[entry.category] = sums.get(entry.category, 0) + entry.amount_cents
        return dict(sorted(sums.items()))

    def between(self, start, end):
        return [entry for entry in self.entries if start <= entry.date <= end]
