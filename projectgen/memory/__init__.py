"""What the agents remember between revisions and attempts.

Stage memory (this package's `stage_memory`) is ProjectGen's per-stage revision history,
retrieved by BM25 over judge feedback and diffs for the stage's generator; judges use
none; it is a value that lives in graph state. LiveCoder's memories outlive a run and so
live on disk, each at a path (or URL) its owner chooses: the knowledge store (Chroma,
`knowledge_store`, with offline embeddings: `embedding_models` names them, WordLlama by
default, `embeddings` is the model-free hashing fallback, `chroma_embeddings` the bridge to
Chroma) and the best-repository store (`best_repo`).
Nothing here is global.
"""
from __future__ import annotations

from projectgen.memory.stage_memory import STOPWORDS, MemoryEntry, StageMemory, StageName, render, tokenize

__all__ = ["STOPWORDS", "MemoryEntry", "StageMemory", "StageName", "render", "tokenize"]

# Knowledge store (Chroma, imported lazily), offline embeddings and the best-repository store.
from projectgen.memory.best_repo import BestRepository, BestRepositoryInfo, BestRepositoryStore  # noqa: E402
from projectgen.memory.chroma_embeddings import ChromaEmbeddingAdapter, embedding_identity  # noqa: E402
from projectgen.memory.embedding_models import (  # noqa: E402
    DEFAULT_EMBEDDING, EMBEDDINGS, E5Embeddings, WordLlamaEmbeddings, make_embeddings,
)
from projectgen.memory.embeddings import HashingEmbeddings  # noqa: E402
from projectgen.memory.knowledge_store import KnowledgeStore, RetrievedKnowledge  # noqa: E402

__all__ += ["BestRepository", "BestRepositoryInfo", "BestRepositoryStore", "ChromaEmbeddingAdapter",
            "DEFAULT_EMBEDDING", "E5Embeddings", "EMBEDDINGS", "HashingEmbeddings", "KnowledgeStore",
            "RetrievedKnowledge", "WordLlamaEmbeddings", "embedding_identity", "make_embeddings"]
