import time

from tally import Tally


def test_many_adds_are_fast():
    tally = Tally()
    started = time.perf_counter()
    for i in range(20000):
        tally.add(i % 100)
    assert time.perf_counter() - started < 5 and tally.total == 20000


def test_total_is_cached():
    """The reference sums on every call: this performance wish fails on it."""
    tally = Tally()
    tally.add("a")
    assert "total" in vars(tally), "total is computed on every call"
