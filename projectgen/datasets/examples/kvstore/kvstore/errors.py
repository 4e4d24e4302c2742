"""Exceptions raised by kvstore. Every one of them derives from KVStoreError."""
from __future__ import annotations


class KVStoreError(Exception):
    """Base class of every error raised by kvstore."""


class InvalidKeyError(KVStoreError, ValueError):
    """A key or namespace name is not a non-empty string."""


class KeyNotFoundError(KVStoreError, KeyError):
    """The key is absent from the namespace, or its time-to-live has run out."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key

    def __str__(self) -> str:
        return f"key not found: {self.key!r}"


class SerializationError(KVStoreError):
    """A value cannot be represented as JSON, or a text is not valid JSON."""


class StorageError(KVStoreError):
    """A storage backend cannot be read or written (I/O failure, corrupt file)."""


class TransactionError(KVStoreError):
    """A transaction was used after it had been committed or rolled back."""
