import contextlib
import io
import os
import tempfile
import unittest

from ledger_book import Entry, Ledger, format_cents, parse_entry
from ledger_book.__main__ import main


class ParseEntryTest(unittest.TestCase):
    def test_an_expense(self):
        self.assertEqual(parse_entry("2024-03-01 -12.50 food"), Entry("2024-03-01", -1250, "food"))

    def test_whole_units_and_one_decimal(self):
        self.assertEqual(parse_entry("2024-03-02 +1200 salary").amount_cents, 120000)
        self.assertEqual(parse_entry("2024-03-02 +0.5 tips").amount_cents, 50)

    def test_cents_are_exact(self):
        self.assertEqual(parse_entry("2024-03-03 +0.29 refund").amount_cents, 29)
        self.assertEqual(parse_entry("2024-03-03 -1.15 bus").amount_cents, -115)

    def test_a_malformed_line(self):
        for line in ("2024-03-01 12.50 food", "yesterday -3 food", "2024-03-01 -1.234 food", ""):
            with self.subTest(line=line):
                with self.assertRaises(ValueError):
                    parse_entry(line)


class LedgerTest(unittest.TestCase):
    def setUp(self):
        self.ledger = Ledger()
        for line in ("2024-03-01 -12.50 food", "2024-03-02 +1200 salary", "2024-03-05 -7.25 food",
                     "2024-03-09 -30 bus"):
            self.ledger.add(parse_entry(line))

    def test_balance(self):
        self.assertEqual(self.ledger.balance(), 115025)

    def test_totals_in_category_order(self):
        self.assertEqual(list(self.ledger.totals().items()),
                         [("bus", -3000), ("food", -1975), ("salary", 120000)])

    def test_between_includes_both_ends(self):
        self.assertEqual([e.date for e in self.ledger.between("2024-03-02", "2024-03-05")],
                         ["2024-03-02", "2024-03-05"])

    def test_format_cents(self):
        self.assertEqual(format_cents(-1250), "-12.50")
        self.assertEqual(format_cents(5), "0.05")
        self.assertEqual(format_cents(-5), "-0.05")
        self.assertEqual(format_cents(120000), "1200.00")


class MainTest(unittest.TestCase):
    def test_main_prints_the_balance_and_the_categories(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "march.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("2024-03-01 -12.50 food\n\n2024-03-02 +0.29 refund\n")
            output = io.StringIO()
            with contextlib.redirect_stdout(output):
                main([path])
        self.assertEqual(output.getvalue(), "balance: -12.21\nfood: -12.50\nrefund: 0.29\n")


if __name__ == "__main__":
    unittest.main()
