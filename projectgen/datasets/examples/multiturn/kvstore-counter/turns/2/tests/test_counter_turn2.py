import pytest

from kvstore import KVStore
from kvstore.counter import Counter


class FakeClock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_a_window_expires_and_the_count_restarts():
    clock = FakeClock()
    counter = Counter(KVStore(clock=clock))
    assert counter.incr("logins", ttl=60) == 1
    clock.now += 30
    assert counter.incr("logins", ttl=60) == 2
    clock.now += 29.5
    assert counter.get("logins") == 2
    clock.now += 0.5
    assert counter.get("logins") == 0
    assert counter.incr("logins", ttl=60) == 1


def test_increments_keep_the_window_without_ttl():
    clock = FakeClock()
    store = KVStore(clock=clock)
    counter = Counter(store)
    counter.incr("k", ttl=10)
    clock.now += 4
    counter.incr("k")
    assert store.ttl("k") == pytest.approx(6)


def test_no_ttl_means_no_expiry():
    clock = FakeClock()
    store = KVStore(clock=clock)
    Counter(store).incr("k", 2)
    assert store.ttl("k") is None


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), "10"])
def test_ttl_must_be_positive(ttl):
    with pytest.raises(ValueError):
        Counter(KVStore()).incr("k", ttl=ttl)
