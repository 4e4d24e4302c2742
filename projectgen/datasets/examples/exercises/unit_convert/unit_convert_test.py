import unittest

from unit_convert import UnknownUnitError, convert, factor, parse_quantity


class UnitConvertTest(unittest.TestCase):
    def test_same_unit_is_unchanged(self):
        self.assertEqual(convert(12.5, "m", "m"), 12.5)

    def test_kilometres_to_metres(self):
        self.assertAlmostEqual(convert(3, "km", "m"), 3000)

    def test_feet_to_inches(self):
        self.assertAlmostEqual(convert(1, "ft", "in"), 12)

    def test_miles_to_kilometres(self):
        self.assertAlmostEqual(convert(1, "mi", "km"), 1.609344)

    def test_factor_of_a_unit(self):
        self.assertEqual(factor("cm"), 0.01)

    def test_an_unknown_unit_is_named(self):
        with self.assertRaises(UnknownUnitError) as caught:
            convert(1, "m", "furlong")
        self.assertIn("furlong", str(caught.exception))
        self.assertIsInstance(caught.exception, ValueError)

    def test_parse_quantity(self):
        self.assertEqual(parse_quantity("3.5 km"), (3.5, "km"))
        self.assertEqual(parse_quantity("  12   in "), (12.0, "in"))

    def test_parse_rejects_what_is_not_a_quantity(self):
        for text in ("km 3", "3", "three km", "3km", ""):
            with self.subTest(text=text):
                with self.assertRaises(ValueError):
                    parse_quantity(text)


if __name__ == "__main__":
    unittest.main()
