"""kvstore: a small key-value store with TTL expiry, namespaces and transactions."""
from .codec import decode, encode, validate_value
from .errors import (
    InvalidKeyError,
    KeyNotFoundError,
    KVStoreError,
    SerializationError,
    StorageError,
    TransactionError,
)
from .storage import JSONFileStorage, MemoryStorage, Storage
from .store import KVStore, Transaction

__version__ = "1.0.0"

__all__ = [
    "InvalidKeyError",
    "JSONFileStorage",
    "KVStore",
    "KVStoreError",
    "KeyNotFoundError",
    "MemoryStorage",
    "SerializationError",
    "Storage",
    "StorageError",
    "Transaction",
    "TransactionError",
    "decode",
    "encode",
    "validate_value",
]
