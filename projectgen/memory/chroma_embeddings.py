"""The bridge between the knowledge store's embeddings and Chroma, and what a store records of them.

Vectors of two embeddings cannot be compared, so a knowledge store must be queried and added
to with the embedding that built it. `embedding_identity` says what makes an embedding's
vectors: its name, model, version and dimensions (`WordLlamaEmbeddings`, `E5Embeddings` and
`HashingEmbeddings` say so themselves; for any other LangChain `Embeddings` they are read from
its class and fields such as ``model`` and ``dimensions``). The store writes that identity
into its Chroma collection's metadata and refuses any other (`knowledge_store`).

`ChromaEmbeddingAdapter` turns any object with the LangChain `Embeddings` interface into a
Chroma embedding function. Neither this module nor the embeddings import chromadb or
LangChain at import time.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from projectgen.memory.embedding_models import EMBEDDINGS, make_embeddings
from projectgen.memory.embeddings import EmbeddingsLike, HashingEmbeddings

__all__ = ["IDENTITY_KEYS", "ChromaEmbeddingAdapter", "describe_embeddings", "describe_identity",
           "embedding_identity", "identity_from_config"]

# The keys of an identity, as they appear in a collection's metadata.
IDENTITY_KEYS = ("embedding", "embedding_model", "embedding_version", "embedding_dims")


_IDENTITY_FIELDS = ("model", "model_name", "dimensions", "size", "dims", "bigrams")


def describe_embeddings(embeddings: Any) -> dict[str, Any]:
    """A JSON description of an embeddings object: its class and the settings that shape
    its vectors (model name, dimensions). Two objects with the same description are
    assumed to embed alike; the knowledge store refuses a collection built with another.
    """
    cls = type(embeddings)
    if callable(getattr(embeddings, "identity", None)) and callable(getattr(embeddings, "config", None)):
        settings = embeddings.config()  # projectgen's own embeddings
    else:
        settings = {}
        for field in _IDENTITY_FIELDS:
            value = getattr(embeddings, field, None)
            if isinstance(value, (str, int, float, bool)) and not callable(value):
                settings[field] = value
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "settings": settings}


# Embeddings objects adapted in this process, by description, so that Chroma's
# `build_from_config` (which it calls to check an embedding function) can find them.
_LIVE: dict[str, Any] = {}


def _key(description: dict[str, Any]) -> str:
    return json.dumps(description, sort_keys=True)


_HASHING = f"{HashingEmbeddings.__module__}.{HashingEmbeddings.__qualname__}"


def identity_from_config(config: dict[str, Any]) -> dict[str, str | int]:
    """The identity a `describe_embeddings` description (an adapter's persisted config) stands for."""
    settings = dict(config.get("settings") or {})
    if config.get("class") == _HASHING:
        return HashingEmbeddings(**settings).identity()
    if all(key in settings for key in IDENTITY_KEYS):
        return {key: settings[key] for key in IDENTITY_KEYS}
    size = next((settings[k] for k in ("dimensions", "size", "dims") if isinstance(settings.get(k), int)), 0)
    return {"embedding": str(config.get("class")), "embedding_version": "", "embedding_dims": size,
            "embedding_model": ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))}


def embedding_identity(embeddings: Any) -> dict[str, str | int]:
    """What makes an embedding's vectors: name, model, version, dimensions (0: not known)."""
    own = getattr(embeddings, "identity", None)
    return dict(own()) if callable(own) else identity_from_config(describe_embeddings(embeddings))


def describe_identity(identity: dict[str, Any]) -> str:
    """One phrase for messages: ``wordllama (l2_supercat, 256 dims, version 0.4.0.post1)``."""
    name = str(identity.get("embedding", "?"))
    parts = [str(identity.get("embedding_model") or ""),
             f"{identity['embedding_dims']} dims" if identity.get("embedding_dims") else "",
             f"version {identity['embedding_version']}" if identity.get("embedding_version") else ""]
    details = ", ".join(p for p in parts if p)
    return f"{name} ({details})" if details else name


class ChromaEmbeddingAdapter:
    """Any LangChain-style `Embeddings` as a Chroma (1.x) embedding function.

    Implements Chroma's `EmbeddingFunction` protocol structurally (``__call__(self,
    input)``, ``embed_query``, ``name``, ``get_config``, ``build_from_config``, spaces),
    so chromadb is not imported until Chroma calls it. The persisted config records the
    embeddings' class and settings (`describe_embeddings`): a collection re-opened with
    the same adapter loads without warnings, and a collection of a named embedding
    (``hashing``, ``wordllama``, ``e5``) can be rebuilt from its config alone. Other
    embeddings cannot be rebuilt from a config (they hold clients and keys), so pass them
    explicitly when opening the store.
    """

    NAME = "projectgen_langchain"

    def __init__(self, embeddings: EmbeddingsLike) -> None:
        if not (callable(getattr(embeddings, "embed_documents", None))
                and callable(getattr(embeddings, "embed_query", None))):
            raise TypeError(f"{type(embeddings).__name__} is not a LangChain Embeddings "
                            "(needs embed_documents and embed_query)")
        self.embeddings = embeddings
        self._description = describe_embeddings(embeddings)
        _LIVE[_key(self._description)] = embeddings

    def __repr__(self) -> str:
        return f"ChromaEmbeddingAdapter({self.embeddings!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChromaEmbeddingAdapter) and self._description == other._description

    def __hash__(self) -> int:
        return hash(_key(self._description))

    @staticmethod
    def _arrays(vectors: Sequence[Sequence[float]]) -> list[Any]:
        import numpy as np

        return [np.asarray(v, dtype=np.float32) for v in vectors]

    # Chroma's EmbeddingFunction protocol ----------------------------------------------
    def __call__(self, input: Sequence[str]) -> list[Any]:  # noqa: A002 (Chroma's parameter name)
        return self._arrays(self.embeddings.embed_documents(list(input)))

    def embed_query(self, input: Sequence[str]) -> list[Any]:  # noqa: A002
        return self._arrays([self.embeddings.embed_query(text) for text in input])

    @staticmethod
    def name() -> str:
        return ChromaEmbeddingAdapter.NAME

    def get_config(self) -> dict[str, Any]:
        return dict(self._description)

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChromaEmbeddingAdapter:
        live = _LIVE.get(_key({"class": config.get("class"), "settings": config.get("settings", {})}))
        if live is not None:
            return ChromaEmbeddingAdapter(live)
        settings = config.get("settings", {})
        if config.get("class") == _HASHING:
            return ChromaEmbeddingAdapter(HashingEmbeddings(**settings))
        if settings.get("embedding") in EMBEDDINGS:
            return ChromaEmbeddingAdapter(make_embeddings(settings["embedding"]))
        raise ValueError(f"cannot rebuild embeddings {config.get('class')} from a stored config; "
                         "pass the embeddings explicitly")

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        if not isinstance(config.get("class"), str):
            raise ValueError(f"not a {ChromaEmbeddingAdapter.NAME} config: {config!r}")

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        if old_config != new_config:
            raise ValueError("the embeddings of a collection cannot change: "
                             f"{old_config.get('class')} -> {new_config.get('class')}")

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def is_legacy(self) -> bool:
        return False
