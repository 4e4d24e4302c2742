"""The knowledge store's embedding interface, and the model-free one: feature hashing.

Chroma's default embedding function downloads a sentence-transformer model on first use,
which fails on a machine without network. `HashingEmbeddings` needs no model, no package and
no download, gives the same vector for the same text in every process, and is fast enough to
embed every knowledge entry on the fly. It is the fallback of the default embedding
(`embedding_models`: WordLlama) and what every store built before that default was built with.

**What it measures.** Each text becomes a bag of word tokens (`tokenize`: lower-cased
words, identifiers also split into their parts, stopwords dropped) plus adjacent token
pairs (bigrams), with sublinear term frequency (``1 + log tf``), hashed into a fixed
number of dimensions (feature hashing) and L2-normalised, so that the dot product of two
vectors is their cosine similarity, between 0 (no shared feature) and 1. That is *lexical overlap*: two texts
are near when they share words and identifiers (``TTL``, ``KeyValueStore``, ``expire``),
not when they mean the same thing in other words ("time to live" vs "expiry" is missed).
On the labelled set of benchmarks/knowledge_retrieval.py it ranks a requirement's own entry
first whenever the two share the task's words, and rarely when the requirement is paraphrased.

`HashingEmbeddings` has the LangChain `Embeddings` interface (``embed_documents``,
``embed_query`` and their async forms) without importing LangChain, so importing
`projectgen.memory` stays cheap; `chroma_embeddings.ChromaEmbeddingAdapter` turns any object
with that interface into a Chroma embedding function.
"""
from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Any, Protocol, runtime_checkable

from projectgen.memory.stage_memory import tokenize

__all__ = ["EmbeddingsLike", "HashingEmbeddings"]


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

    def identity(self) -> dict[str, str | int]:
        """What makes the vectors (recorded in a knowledge store; see `chroma_embeddings`)."""
        return {"embedding": "hashing", "embedding_model": "feature-hashing" + ("+bigrams" if self.bigrams else ""),
                "embedding_version": "1", "embedding_dims": self.dims}

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
