import unittest

from tally_marks import (
    tally,
)


class TallyMarksTest(unittest.TestCase):
    def test_zero(self):
        self.assertEqual(tally(0), "")

    def test_fewer_than_five(self):
        self.assertEqual(tally(3), "|||")

    def test_groups_of_five(self):
        self.assertEqual(tally(5), "||||/")
        self.assertEqual(tally(12), "||||/ ||||/ ||")

    def test_a_negative_count(self):
        with self.assertRaisesRegex(ValueError, r".+"):
            tally(-1)


if __name__ == "__main__":
    unittest.main()
