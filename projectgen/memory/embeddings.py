"""Embeddings for the knowledge store that work offline, and a bridge to Chroma.

Chroma's default embedding function downloads a sentence-transformer model on first use,
which fails on a machine without network. `HashingEmbeddings` is the offline default: it
needs no model and no download, gives the same vector for the same text in every process,
and is fast enough to embed every knowledge entry on the fly.

**What it measures.** Each text becomes a bag of word tokens (`tokenize`: lower-cased
words, identifiers also split into their parts, stopwords dropped) plus adjacent token
pairs (bigrams), with sublinear term frequency (``1 + log tf``), hashed into a fixed
number of dimensions (feature hashing) and L2-normalised, so that the dot product of two
vectors is their cosine similarity, between 0 (no shared feature) and 1. That is *lexical overlap*: two texts
are near when they share words and identifiers (``TTL``, ``KeyValueStore``, ``expire``),
not when they mean the same thing in other words ("time to live" vs "expiry" is missed).
For knowledge entries written by an LLM about the same task, overlap is a fair proxy; for
real semantic retrieval pass any LangChain `Embeddings` instead, e.g.
``OpenAIEmbeddings(model="text-embedding-3-small", base_url="http://localhost:8000/v1")``.

`HashingEmbeddings` has the LangChain `Embeddings` interface (``embed_documents``,
``embed_query`` and their async forms) without importing LangChain, so importing
`projectgen.memory` stays cheap; `ChromaEmbeddingAdapter` turns any object with that
interface into a Chroma embedding function. Neither module imports chromadb or LangChain
at import time.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from projectgen.memory.stage_memory import tokenize

__all__ = ["ChromaEmbeddingAdapter", "EmbeddingsLike", "HashingEmbeddings", "describe_embeddings"]


@runtime_checkable
class EmbeddingsLike(Protocol):
    """The part of LangChain's `Embeddings` interface the knowledge store uses."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class HashingEmbeddings:
    """Deterministic, offline feature-hashing embeddings (lexical overlap, not meaning).

    ``dims`` is the vector size; two different features land in the same dimension with
    probability 1/dims, which gives unrelated texts a small similarity above 0 (rarely
    more than a few hundredths at 1024 dims for entry-sized texts). ``bigrams`` adds adjacent token
    pairs as features, so "key value" and "value key" differ a little. Documents and
    queries are embedded the same way. See the module docstring for what this can and
    cannot find.
    """

    def __init__(self, dims: int = 1024, bigrams: bool = True) -> None:
        if dims < 16:
            raise ValueError(f"dims must be at least 16, got {dims}")
        self.dims = int(dims)
        self.bigrams = bool(bigrams)

    def __repr__(self) -> str:
        return f"HashingEmbeddings(dims={self.dims}, bigrams={self.bigrams})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HashingEmbeddings) and self.config() == other.config()

    def __hash__(self) -> int:
        return hash((self.dims, self.bigrams))

    def config(self) -> dict[str, Any]:
        """The settings that determine the vectors (persisted with a Chroma collection)."""
        return {"dims": self.dims, "bigrams": self.bigrams}

    def features(self, text: str) -> Counter[str]:
        """The weighted-before-hashing features of a text: tokens and token bigrams."""
        tokens = tokenize(text)
        counts = Counter(tokens)
        if self.bigrams:
            counts.update(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))
        return counts

    def embed(self, text: str) -> list[float]:
        """One unit-length vector. A text with no tokens gets a fixed vector of its own."""
        counts = self.features(text)
        if not counts:
            counts = Counter({"\x00empty": 1})
        vector = [0.0] * self.dims
        for feature, tf in counts.items():
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            vector[int.from_bytes(digest, "little") % self.dims] += 1.0 + math.log(tf)
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector]

    # LangChain `Embeddings` interface -------------------------------------------------
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


_IDENTITY_FIELDS = ("model", "model_name", "dimensions", "size", "dims", "bigrams")


def describe_embeddings(embeddings: Any) -> dict[str, Any]:
    """A JSON description of an embeddings object: its class and the settings that shape
    its vectors (model name, dimensions). Two objects with the same description are
    assumed to embed alike; the knowledge store refuses a collection built with another.
    """
    cls = type(embeddings)
    if isinstance(embeddings, HashingEmbeddings):
        settings = embeddings.config()
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


class ChromaEmbeddingAdapter:
    """Any LangChain-style `Embeddings` as a Chroma (1.x) embedding function.

    Implements Chroma's `EmbeddingFunction` protocol structurally (``__call__(self,
    input)``, ``embed_query``, ``name``, ``get_config``, ``build_from_config``, spaces),
    so chromadb is not imported until Chroma calls it. The persisted config records the
    embeddings' class and settings (`describe_embeddings`): a collection re-opened with
    the same adapter loads without warnings, and a `HashingEmbeddings` collection can be
    rebuilt from its config alone. Other embeddings cannot be rebuilt from a config (they
    hold clients and keys), so pass them explicitly when opening the store.
    """

    NAME = "projectgen_langchain"

    def __init__(self, embeddings: EmbeddingsLike | None = None) -> None:
        embeddings = HashingEmbeddings() if embeddings is None else embeddings
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
        if config.get("class") == f"{HashingEmbeddings.__module__}.{HashingEmbeddings.__qualname__}":
            return ChromaEmbeddingAdapter(HashingEmbeddings(**config.get("settings", {})))
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
