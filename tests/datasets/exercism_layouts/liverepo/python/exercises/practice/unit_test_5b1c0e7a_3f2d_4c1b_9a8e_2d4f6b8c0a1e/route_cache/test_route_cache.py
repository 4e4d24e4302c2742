import unittest
from route_cache import RouteCache
from route_cache.main import run

class RouteCacheTest(unittest.TestCase):
    def test_get_what_was_put(self):
        cache = RouteCache(2)
        cache.put("A", "B", ["A", "X", "B"])
        self.assertEqual(cache.get("A", "B"), ["A", "X", "B"])
        self.assertIsNone(cache.get("B", "A"))

    def test_least_recently_used_goes_first(self):
        cache = RouteCache(2)
        cache.put("A", "B", ["A", "B"])
        cache.put("B", "C", ["B", "C"])
        cache.get("A", "B")
        cache.put("C", "D", ["C", "D"])
        self.assertIsNone(cache.get("B", "C"))
        self.assertEqual(len(cache), 2)

    def test_bad_capacity(self):
        with self.assertRaises(ValueError):
            RouteCache(0)

    def test_commands(self):
        self.assertEqual(run(["PUT a b a,b", "GET a b", "GET b a"]), ["a,b", "MISS"])

if __name__ == '__main__':
    unittest.main()
