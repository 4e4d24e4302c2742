import pytest

from kvstore import InvalidKeyError, JSONFileStorage, KVStore
from kvstore.counter import Counter


def test_incr_many_changes_every_count():
    counter = Counter(KVStore())
    counter.incr("a")
    assert counter.incr_many({"a": 2, "b": 5}) == {"a": 3, "b": 5}
    assert (counter.get("a"), counter.get("b")) == (3, 5)


@pytest.mark.parametrize("counts, error", [({"a": 2, "b": 1.5}, TypeError), ({"a": 2, "": 1}, InvalidKeyError)])
def test_incr_many_is_all_or_nothing(counts, error):
    counter = Counter(KVStore())
    counter.incr("a")
    with pytest.raises(error):
        counter.incr_many(counts)
    assert counter.get("a") == 1 and counter.get("b") == 0


def test_reset_returns_the_old_count():
    counter = Counter(KVStore())
    counter.incr("a", 7)
    assert counter.reset("a") == 7
    assert counter.get("a") == 0
    assert counter.reset("a") == 0


def test_counts_survive_reopening_the_file(tmp_path):
    path = tmp_path / "counts.json"
    Counter(KVStore(JSONFileStorage(path))).incr_many({"x": 2, "y": 3})
    reopened = Counter(KVStore(JSONFileStorage(path)))
    assert reopened.incr("x") == 3 and reopened.get("y") == 3
