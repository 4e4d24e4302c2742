import pytest

from kvstore import InvalidKeyError, KVStore
from kvstore.counter import Counter


def test_counts_start_at_zero_and_add_up():
    counter = Counter(KVStore())
    assert counter.get("visits") == 0
    assert counter.incr("visits") == 1
    assert counter.incr("visits", by=5) == 6
    assert counter.incr("visits", -2) == 4
    assert counter.get("visits") == 4


def test_counts_live_in_the_store_as_ints():
    store = KVStore()
    Counter(store).incr("hits", 3)
    assert store.get("hits") == 3
    assert Counter(store.namespace("other")).get("hits") == 0


@pytest.mark.parametrize("by", [1.5, "2", True, None])
def test_amounts_must_be_ints(by):
    with pytest.raises(TypeError):
        Counter(KVStore()).incr("k", by)


def test_keys_follow_the_store_rules():
    with pytest.raises(InvalidKeyError):
        Counter(KVStore()).incr("")
