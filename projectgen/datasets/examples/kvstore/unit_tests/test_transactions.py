import pytest

from kvstore import KVStore, MemoryStorage, Transaction, TransactionError


class CountingStorage(MemoryStorage):
    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, data):
        self.writes += 1
        super().write(data)


def test_changes_are_invisible_until_commit_and_written_once():
    storage = CountingStorage()
    store = KVStore(storage)
    store.set("a", 1)
    tx = store.transaction()
    assert isinstance(tx, Transaction) and tx.active
    tx.set("b", 2)
    tx.delete("a")
    assert tx.keys() == ["b"]
    assert store.keys() == ["a"]
    writes_before = storage.writes
    tx.commit()
    assert storage.writes == writes_before + 1
    assert store.items() == [("b", 2)]
    assert tx.state == "committed" and not tx.active


def test_explicit_rollback_discards_changes():
    store = KVStore()
    store.set("a", 1)
    tx = store.transaction()
    tx.set("a", 99)
    tx.rollback()
    assert store.get("a") == 1
    assert tx.state == "rolled back"


def test_context_manager_commits_on_success():
    store = KVStore()
    with store.transaction() as tx:
        tx.set("x", {"y": 1})
    assert store.get("x") == {"y": 1}
    assert tx.state == "committed"
    with store.transaction() as tx:
        tx.set("k", 1)
        tx.commit()  # the block's exit must not commit again
    assert store.get("k") == 1


def test_finished_transaction_cannot_be_used():
    store = KVStore()
    tx = store.transaction()
    tx.commit()
    with pytest.raises(TransactionError):
        tx.commit()
    with pytest.raises(TransactionError):
        tx.rollback()
    with pytest.raises(TransactionError):
        tx.set("k", 1)
    with pytest.raises(TransactionError):
        tx.get("k")


def test_transaction_uses_store_namespace_and_clock():
    now = [0.0]
    store = KVStore(namespace="jobs", clock=lambda: now[0])
    with store.transaction() as tx:
        assert tx.namespace_name == "jobs"
        tx.set("job", "run", ttl=5)
    assert store.get("job") == "run"
    now[0] = 5.0
    assert "job" not in store
