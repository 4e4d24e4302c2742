"""Visible acceptance checks for kvstore."""
import pytest

from kvstore import JSONFileStorage, KeyNotFoundError, KVStore


class FakeClock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def test_set_get_and_missing_key():
    store = KVStore()
    store.set("answer", 42)
    store.set("config", {"debug": True, "tags": ["a", "b"]})
    assert store.get("answer") == 42
    assert store.get("config") == {"debug": True, "tags": ["a", "b"]}
    assert store.get("nope", "fallback") == "fallback"
    with pytest.raises(KeyNotFoundError):
        store.get("nope")


def test_ttl_expiry_with_injected_clock():
    clock = FakeClock()
    store = KVStore(clock=clock)
    store.set("session", "abc", ttl=10)
    clock.now += 9.5
    assert store.get("session") == "abc"
    assert store.ttl("session") == pytest.approx(0.5)
    clock.now += 0.5
    assert "session" not in store
    assert store.get("session", None) is None
    assert store.keys() == []


def test_transaction_rolls_back_on_exception():
    store = KVStore()
    store.set("balance", 100)
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.set("balance", 50)
            tx.set("audit", "withdrawal")
            raise RuntimeError("boom")
    assert store.get("balance") == 100
    assert "audit" not in store
    assert tx.state == "rolled back"


def test_json_file_storage_persists_between_stores(tmp_path):
    path = tmp_path / "data.json"
    with KVStore(JSONFileStorage(path)) as store:
        store.set("user", {"name": "Ada"})
    reopened = KVStore(JSONFileStorage(path))
    assert reopened.get("user") == {"name": "Ada"}
    assert reopened.keys() == ["user"]


def test_namespaces_are_isolated():
    store = KVStore()
    users = store.namespace("users")
    users.set("1", "Ada")
    store.set("1", "default one")
    assert users.get("1") == "Ada"
    assert store.get("1") == "default one"
    assert store.namespace("users").keys() == ["1"]
    assert store.namespaces() == ["default", "users"]
