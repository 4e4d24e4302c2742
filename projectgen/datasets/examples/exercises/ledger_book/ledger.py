"""A ledger of entries."""


def format_cents(cents):
    pass


class Ledger:
    def __init__(self):
        pass

    def add(self, entry):
        pass

    def balance(self):
        pass

    def totals(self):
        pass

    def between(self, start, end):
        pass
