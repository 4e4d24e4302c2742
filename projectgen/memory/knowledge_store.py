"""LiveCoder's knowledge store: success and failure entries per task, in Chroma.

Each attempt at a task leaves knowledge entries (`SuccessKnowledge`, `FailureKnowledge`);
before the next attempt the agents get back the few entries of the same task most similar
to the requirement, by cosine similarity of their embeddings. The store is a Chroma
collection: an embedded `PersistentClient` in a folder by default (durable, no server),
or a Chroma server for shared use (`KnowledgeStore.server`).

Embeddings are always passed to Chroma explicitly (`ChromaEmbeddingAdapter`), never left
to Chroma's default, which downloads a model and fails offline. The default is WordLlama's
static embeddings (`embedding_models`; ``hashing`` when its package is missing, with a
warning); a name (``wordllama``, ``e5``, ``hashing``) or any LangChain `Embeddings` object
can replace it. A collection records the embedding that built it (name, model, version,
dimensions) in its metadata, and opening it with another one is refused in one line
(vectors of two models cannot be compared). A collection that records none (every store
made before the default changed) was built with ``hashing``: its adapter config says so,
and with no config at all that is assumed.

Adding is idempotent: an entry's id is derived from task, run, attempt and kind, so a
resumed run that re-adds the same attempt's entries replaces them instead of duplicating.
The entry itself is kept as JSON in the record's metadata and rebuilt on retrieval.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from projectgen.errors import ProjectGenError, first_line
from projectgen.memory.chroma_embeddings import (
    IDENTITY_KEYS,
    ChromaEmbeddingAdapter,
    describe_identity,
    embedding_identity,
    identity_from_config,
)
from projectgen.memory.embedding_models import EMBEDDINGS, resolve_embeddings
from projectgen.memory.embeddings import EmbeddingsLike, HashingEmbeddings
from projectgen.memory.knowledge_entries import (
    FailureKnowledge,
    KnowledgeEntry,
    KnowledgeKind,
    SuccessKnowledge,
)

__all__ = ["DEFAULT_COLLECTION", "KnowledgeStore", "RetrievedKnowledge", "knowledge_id"]

DEFAULT_COLLECTION = "projectgen-knowledge"
_SCHEMA_VERSION = 1
_KINDS = ("success", "failure")


class RetrievedKnowledge(BaseModel):
    """One retrieved entry and its cosine similarity to the query (1 = same direction)."""

    model_config = ConfigDict(frozen=True)

    id: str
    task_id: str
    run_id: str | None = None
    similarity: float
    entry: Annotated[SuccessKnowledge | FailureKnowledge, Field(discriminator="kind")]


def knowledge_id(task_id: str, entry_kind: str, attempt: int, run_id: str | None = None) -> str:
    """The record id of a task's entry: the same inputs always give the same id."""
    digest = hashlib.sha256(json.dumps([task_id, run_id, attempt, entry_kind]).encode()).hexdigest()
    return f"{entry_kind}-{attempt}-{digest[:24]}"


def _rebuild(metadata: dict[str, Any]) -> KnowledgeEntry:
    try:
        data = json.loads(str(metadata["entry"]))
        model = SuccessKnowledge if data.get("kind") == "success" else FailureKnowledge
        return model.model_validate(data)
    except (KeyError, ValueError, AttributeError) as exc:  # ValidationError is a ValueError
        raise ProjectGenError(f"knowledge record of task {metadata.get('task_id')!r}, attempt "
                              f"{metadata.get('attempt')!r} is not a readable entry ({type(exc).__name__})") from None


def _where(task_id: str, kind: str | None, run_id: str | None) -> dict[str, Any]:
    clauses: list[dict[str, Any]] = [{"task_id": task_id}]
    if kind is not None:
        if kind not in _KINDS:
            raise ProjectGenError(f"unknown knowledge kind {kind!r}: expected one of {', '.join(_KINDS)}")
        clauses.append({"kind": kind})
    if run_id is not None:
        clauses.append({"run_id": run_id})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class KnowledgeStore:
    """Knowledge entries of many tasks (and runs) in one Chroma collection.

    Use `KnowledgeStore.persistent(path)` (embedded, the default) or
    `KnowledgeStore.server(url)`; the constructor takes any Chroma client (e.g. an
    `EphemeralClient` for experiments). ``embeddings`` is a name of `EMBEDDINGS` or any
    LangChain `Embeddings` (default: the default embedding, see the module docstring); it
    must be the one the collection was built with. ``location`` only names the store in
    messages.
    """

    def __init__(self, client: Any, embeddings: str | EmbeddingsLike | None = None,
                 collection: str = DEFAULT_COLLECTION, location: str = "chroma") -> None:
        self.embeddings = resolve_embeddings(embeddings, notice=_warn)
        self.location = location
        self._client = client
        self._function = ChromaEmbeddingAdapter(self.embeddings)
        identity = embedding_identity(self.embeddings)
        with self._errors(f"cannot open collection {collection!r}"):
            from chromadb.utils.embedding_functions import register_embedding_function

            # Registered so that Chroma can rebuild the function from a stored config.
            register_embedding_function(ChromaEmbeddingAdapter)
            self._collection = client.get_or_create_collection(
                collection,
                embedding_function=self._function,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"projectgen": "knowledge", "schema_version": _SCHEMA_VERSION, **identity},
            )
        self._check_embeddings(identity)

    # Constructors ----------------------------------------------------------------------
    @classmethod
    def persistent(cls, path: str | Path, embeddings: str | EmbeddingsLike | None = None,
                   collection: str = DEFAULT_COLLECTION) -> KnowledgeStore:
        """An embedded store in the folder `path` (created when missing)."""
        path = Path(path)
        if path.exists() and not path.is_dir():
            raise ProjectGenError(f"knowledge store {path}: not a folder")
        with _chroma_errors(f"knowledge store {path}: cannot open"):
            import chromadb
            from chromadb.config import Settings

            client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
        return cls._opened(client, embeddings, collection, str(path))

    @classmethod
    def server(cls, url: str, embeddings: str | EmbeddingsLike | None = None, collection: str = DEFAULT_COLLECTION,
               headers: dict[str, str] | None = None, tenant: str | None = None,
               database: str | None = None) -> KnowledgeStore:
        """A store on a Chroma server, e.g. ``http://localhost:8000`` (port 8000 unless
        given; ``https://`` enables TLS and defaults to port 443)."""
        host, port, ssl = parse_server_url(url)
        with _chroma_errors(f"knowledge store {url}: cannot connect (is the Chroma server running?)"):
            import chromadb
            from chromadb.config import DEFAULT_DATABASE, DEFAULT_TENANT, Settings

            client = chromadb.HttpClient(host=host, port=port, ssl=ssl, headers=headers,
                                         settings=Settings(anonymized_telemetry=False),
                                         tenant=tenant or DEFAULT_TENANT, database=database or DEFAULT_DATABASE)
        return cls._opened(client, embeddings, collection, url)

    @classmethod
    def _opened(cls, client: Any, embeddings: str | EmbeddingsLike | None, collection: str,
                location: str) -> KnowledgeStore:
        try:
            return cls(client, embeddings, collection, location=location)
        except BaseException:
            client.close()  # the store owns a client it created: release it (SQLite files, sockets)
            raise

    # Writing ---------------------------------------------------------------------------
    def add(self, task_id: str, entry: KnowledgeEntry, run_id: str | None = None) -> str:
        """Store an entry of a task (replacing the same task/run/attempt/kind); return its id."""
        if not task_id:
            raise ProjectGenError("knowledge entries need a task id")
        record_id = knowledge_id(task_id, entry.kind, entry.attempt, run_id)
        metadata = {
            "task_id": task_id, "kind": entry.kind, "attempt": entry.attempt,
            "score": float(entry.score), "run_id": run_id or "",
            "entry": entry.model_dump_json(), "schema_version": _SCHEMA_VERSION,
        }
        with self._errors("cannot add a knowledge entry"):
            self._collection.upsert(ids=[record_id], documents=[entry.text()], metadatas=[metadata])
        return record_id

    def add_all(self, task_id: str, entries: Sequence[KnowledgeEntry], run_id: str | None = None) -> list[str]:
        """`add` for several entries."""
        return [self.add(task_id, entry, run_id) for entry in entries]

    def delete(self, task_id: str, run_id: str | None = None) -> int:
        """Remove a task's entries (only one run's when `run_id` is given); return how many."""
        where = _where(task_id, None, run_id)
        with self._errors("cannot delete knowledge entries"):
            ids = self._collection.get(where=where, include=[])["ids"]
            if ids:
                self._collection.delete(ids=ids)
        return len(ids)

    # Reading ---------------------------------------------------------------------------
    def retrieve(self, task_id: str, query: str, kind: KnowledgeKind, k: int = 3,
                 run_id: str | None = None) -> list[RetrievedKnowledge]:
        """The `k` entries of `kind` for the task (and run, when given) most similar to
        `query`, most similar first (ties: later attempt first)."""
        if k <= 0:
            return []
        where = _where(task_id, kind, run_id)
        with self._errors("cannot query knowledge entries"):
            result = self._collection.query(query_texts=[query], n_results=k, where=where,
                                            include=["metadatas", "distances"])
        found = [
            RetrievedKnowledge(id=record_id, task_id=str(meta["task_id"]), run_id=str(meta["run_id"]) or None,
                               similarity=1.0 - float(distance), entry=_rebuild(meta))
            for record_id, meta, distance in zip(result["ids"][0], result["metadatas"][0], result["distances"][0])
        ]
        found.sort(key=lambda r: (-round(r.similarity, 9), -r.entry.attempt, r.id))
        return found[:k]

    def entries(self, task_id: str, kind: KnowledgeKind | None = None,
                run_id: str | None = None) -> list[KnowledgeEntry]:
        """A task's entries (of one kind / run when given), in attempt order (success
        before failure within an attempt, then by run)."""
        with self._errors("cannot read knowledge entries"):
            result = self._collection.get(where=_where(task_id, kind, run_id), include=["metadatas"])
        metas = sorted(result["metadatas"], key=lambda m: (int(m["attempt"]), _KINDS.index(str(m["kind"])),
                                                             str(m["run_id"])))
        return [_rebuild(m) for m in metas]

    def count(self, task_id: str | None = None, kind: KnowledgeKind | None = None,
              run_id: str | None = None) -> int:
        """How many entries the store holds (for a task / kind / run when given)."""
        with self._errors("cannot count knowledge entries"):
            if task_id is None:
                if kind is not None or run_id is not None:
                    raise ProjectGenError("count by kind or run needs a task id")
                return int(self._collection.count())
            return len(self._collection.get(where=_where(task_id, kind, run_id), include=[])["ids"])

    # Life cycle ------------------------------------------------------------------------
    def close(self) -> None:
        """Release the client (for an embedded store: its database files)."""
        close = getattr(self._client, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> KnowledgeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"KnowledgeStore({self.location!r}, collection={self._collection.name!r}, embeddings={self.embeddings!r})"

    def recorded_embedding(self) -> dict[str, str | int]:
        """The identity of the embedding the collection was built with (`embedding_identity`):
        from its metadata; for a collection made before that was recorded, from its embedding
        function config; with neither, ``hashing``'s (the only embedding such stores had)."""
        metadata = self._collection.metadata or {}
        if all(key in metadata for key in IDENTITY_KEYS):
            return {key: metadata[key] for key in IDENTITY_KEYS}
        stored = (self._collection.configuration_json or {}).get("embedding_function") or {}
        if stored.get("type") == "known" and stored.get("name") == ChromaEmbeddingAdapter.NAME:
            return identity_from_config(stored.get("config") or {})
        if stored.get("type") == "known":  # made by another tool, with one of Chroma's embedding functions
            return {"embedding": f"Chroma's {stored.get('name')}", "embedding_model": "", "embedding_version": "",
                    "embedding_dims": 0}
        return HashingEmbeddings().identity()

    # Internals -------------------------------------------------------------------------
    def _check_embeddings(self, ours: dict[str, str | int]) -> None:
        theirs = self.recorded_embedding()
        if theirs != ours:
            advice = (f"open it with `--embedding {theirs['embedding']}` (Python: embeddings="
                      f"{theirs['embedding']!r})" if theirs["embedding"] in EMBEDDINGS
                      else "open it with the same embeddings object")
            raise ProjectGenError(
                f"knowledge store {self.location}: collection {self._collection.name!r} was built with embedding "
                f"{describe_identity(theirs)}, not {describe_identity(ours)}; {advice} or use another store")

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        with _chroma_errors(f"knowledge store {self.location}: {what}"):
            yield


def _warn(message: str) -> None:
    import warnings

    warnings.warn(message, stacklevel=4)


def parse_server_url(url: str) -> tuple[str, int, bool]:
    """``http[s]://host[:port]`` -> (host, port, ssl); Chroma's port 8000 by default."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProjectGenError(f"Chroma server URL {url!r}: expected http://HOST[:PORT] or https://HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ProjectGenError(f"Chroma server URL {url!r}: a path, query or fragment is not supported")
    try:
        port = parts.port
    except ValueError as exc:
        raise ProjectGenError(f"Chroma server URL {url!r}: {exc}") from None
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


@contextmanager
def _chroma_errors(prefix: str) -> Iterator[None]:
    """Turn Chroma's and the HTTP client's errors into one-line `ProjectGenError`s."""
    try:
        yield
    except ProjectGenError:
        raise
    except Exception as exc:  # noqa: BLE001 - filtered by origin below
        origin = type(exc).__module__.split(".")[0]
        if origin in ("chromadb", "httpx", "httpcore", "sqlite3") or isinstance(exc, (ValueError, OSError)):
            raise ProjectGenError(f"{prefix}: {first_line(exc)}") from exc
        raise
