import unittest
from hop_count import hops

GRAPH = {"a": ["b"], "b": ["a", "c"], "c": ["b"], "z": []}

class HopCountTest(unittest.TestCase):
    def test_same_node(self):
        self.assertEqual(hops(GRAPH, "a", "a"), 0)

    def test_two_hops(self):
        self.assertEqual(hops(GRAPH, "a", "c"), 2)

    def test_unreachable(self):
        self.assertEqual(hops(GRAPH, "a", "z"), -1)

if __name__ == '__main__':
    unittest.main()
