import pytest

from kvstore import InvalidKeyError, KeyNotFoundError, KVStore, KVStoreError, MemoryStorage, SerializationError


def test_missing_key_error_is_a_key_error(store):
    with pytest.raises(KeyNotFoundError) as info:
        store.get("ghost")
    assert isinstance(info.value, KeyError)
    assert isinstance(info.value, KVStoreError)
    assert info.value.key == "ghost"


def test_invalid_keys_are_rejected(store):
    for bad_key in ("", 1, None):
        with pytest.raises(InvalidKeyError):
            store.set(bad_key, "v")
        with pytest.raises(ValueError):
            store.get(bad_key)
        assert bad_key not in store
    with pytest.raises(InvalidKeyError):
        KVStore(namespace="")


def test_unserializable_value_is_rejected_and_store_unchanged(store):
    store.set("k", "old")
    with pytest.raises(SerializationError):
        store.set("k", {"when": object()})
    assert store.get("k") == "old"


def test_get_returns_independent_copy(store):
    store.set("list", [1, 2])
    store.get("list").append(3)
    assert store.get("list") == [1, 2]


def test_keys_items_len_iter_are_sorted_and_delete_reports(store):
    for key in ("b", "c", "a"):
        store.set(key, key.upper())
    assert store.keys() == ["a", "b", "c"]
    assert store.items() == [("a", "A"), ("b", "B"), ("c", "C")]
    assert len(store) == 3
    assert list(store) == ["a", "b", "c"]
    assert "b" in store and store.has("b")
    assert store.delete("b") is True
    assert store.delete("b") is False
    assert store.has("b") is False
    assert store.keys() == ["a", "c"]


def test_ttl_boundary_and_remaining_time(store, clock):
    store.set("t", "v", ttl=5)
    store.set("forever", "v")
    assert store.ttl("t") == pytest.approx(5)
    assert store.ttl("forever") is None
    clock.advance(4.999)
    assert store.get("t") == "v"
    clock.advance(0.001)
    with pytest.raises(KeyNotFoundError):
        store.get("t")
    with pytest.raises(KeyNotFoundError):
        store.ttl("t")
    assert store.keys() == ["forever"]
    store.set("k", 1, ttl=1)
    store.set("k", 2)  # overwriting without ttl clears the expiry
    clock.advance(100)
    assert store.get("k") == 2


def test_invalid_ttl_raises_value_error(store):
    for bad_ttl in (0, -1, float("inf"), "5", True):
        with pytest.raises(ValueError):
            store.set("k", 1, ttl=bad_ttl)
    assert "k" not in store


def test_purge_expired_removes_entries_from_storage(clock):
    storage = MemoryStorage()
    store = KVStore(storage, clock=clock)
    store.set("old", 1, ttl=1)
    store.set("older", 2, ttl=1)
    store.set("keep", 3)
    clock.advance(1)
    assert store.delete("old") is False  # expired: removed, but reported as absent
    assert store.purge_expired() == 1
    assert store.purge_expired() == 0
    assert storage.read() == {"default": {"keep": {"value": 3, "expires_at": None}}}


def test_storage_layout_records_expiry_time(clock):
    storage = MemoryStorage()
    KVStore(storage, namespace="cache", clock=clock).set("k", [1], ttl=30)
    assert storage.read() == {"cache": {"k": {"value": [1], "expires_at": 1030.0}}}


def test_namespace_views_share_storage_and_clock(store, clock):
    other = store.namespace("other")
    assert other.namespace_name == "other"
    assert store.namespace_name == "default"
    assert other.storage is store.storage
    other.set("k", 1, ttl=2)
    clock.advance(2)
    assert other.keys() == []
    assert store.namespaces() == []
    with pytest.raises(InvalidKeyError):
        store.namespace("")


def test_clear_empties_only_current_namespace(store):
    store.set("a", 1)
    store.namespace("keep").set("b", 2)
    store.clear()
    assert store.keys() == []
    assert store.namespace("keep").items() == [("b", 2)]
    assert store.namespaces() == ["keep"]
