import unittest
from window_median import window_medians

class WindowMedianTest(unittest.TestCase):
    def test_odd_windows(self):
        self.assertEqual(window_medians([5, 1, 4, 2, 3], 3), [4, 2, 3])

    def test_even_window(self):
        # the published kind of defect: this expects the lower middle number, which the instructions do not ask
        self.assertEqual(window_medians([1, 4, 2, 8], 2), [1, 2, 2])

    def test_bad_size(self):
        with self.assertRaises(ValueError):
            window_medians([1, 2], 3)

if __name__ == '__main__':
    unittest.main()
