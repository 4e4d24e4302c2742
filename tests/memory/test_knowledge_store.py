"""The knowledge store: offline embeddings, Chroma persistence, filtering, retrieval order."""
from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from projectgen.errors import ProjectGenError
from projectgen.memory.chroma_embeddings import ChromaEmbeddingAdapter, describe_embeddings
from projectgen.memory.embeddings import HashingEmbeddings
from projectgen.memory.knowledge_entries import FailureKnowledge, SuccessKnowledge
from projectgen.memory.knowledge_store import KnowledgeStore, knowledge_id, parse_server_url
from test_support import chroma_server

REQUIREMENT = (
    "Build kvstore, an in-memory key-value store. set(key, value, ttl=None) stores a value; "
    "a key with a TTL expires after ttl seconds and get(key) then returns None. delete(key) "
    "removes a key; keys() lists the live keys. Expired keys are purged lazily."
)

KV_SUCCESS = SuccessKnowledge(
    attempt=1, score=0.75, task_summary="In-memory key-value store with per-key TTL expiry",
    repository_signals=["kvstore/store.py defines KeyValueStore with set, get, delete and keys"],
    functional_signals=["get returns None once a key's ttl has expired", "delete removes the key"],
    carry_over=["keep the clock injectable so TTL expiry can be tested"])
SCRAPER_SUCCESS = SuccessKnowledge(
    attempt=2, score=0.5, task_summary="A web scraper that downloads HTML pages and follows links",
    repository_signals=["scraper/fetch.py downloads pages with urllib", "scraper/parse.py uses html.parser"],
    functional_signals=["extract_links returns absolute URLs", "robots.txt is respected"],
    carry_over=["retry HTTP 503 responses with backoff"])
KV_FAILURE = FailureKnowledge(
    attempt=1, score=0.75, task_summary="In-memory key-value store with per-key TTL expiry",
    observed_failures=["test_expired_key_is_gone: get returned the value one second after the ttl"],
    repository_failures=["kvstore/__init__.py did not export KeyValueStore"],
    carry_over_constraints=["compare expiry with <=, not <"])


pytestmark = pytest.mark.usefixtures("offline")
# The one warning the store may give: the default embedding's package is missing, hashing is used instead.
FALLBACK_NOTICE = "knowledge: the .* package is not installed"


def test_the_offline_guard_catches_chromas_default_embedding(tmp_path):
    import chromadb
    from chromadb.config import Settings

    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection("no-embedding-given")  # Chroma's default
    with pytest.raises(AssertionError, match="default embedding function was used"):
        collection.add(ids=["1"], documents=["a key-value store"])


@pytest.fixture
def store(tmp_path):
    with KnowledgeStore.persistent(tmp_path / "knowledge") as opened:
        yield opened


# Offline embeddings -------------------------------------------------------------------
def test_hashing_embeddings_are_deterministic_unit_vectors():
    a, b = HashingEmbeddings(dims=256), HashingEmbeddings(dims=256)
    vec = a.embed_query(REQUIREMENT)
    assert len(vec) == 256
    assert vec == b.embed_documents([REQUIREMENT])[0]  # same text, same vector, any instance
    assert math.isclose(sum(x * x for x in vec), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(x * x for x in a.embed_query("")), 1.0)  # no tokens: still a unit vector


def test_hashing_embeddings_measure_lexical_overlap_including_identifier_parts():
    emb = HashingEmbeddings()

    def cos(x: str, y: str) -> float:
        return sum(p * q for p, q in zip(emb.embed_query(x), emb.embed_query(y)))

    assert cos("KeyValueStore.set_ttl", "key value store ttl") > 0.4  # identifier parts are tokens
    assert cos("key value store ttl", "download html pages") < 0.1
    assert cos("expiry", "time to live") < 0.1  # honest limit: no meaning, only shared words


def test_hashing_embeddings_match_the_langchain_interface():
    from langchain_core.embeddings import Embeddings

    emb = HashingEmbeddings(dims=64)
    for name in ("embed_documents", "embed_query", "aembed_documents", "aembed_query"):
        assert callable(getattr(emb, name)) and hasattr(Embeddings, name)


def test_adapter_config_rebuilds_hashing_embeddings():
    adapter = ChromaEmbeddingAdapter(HashingEmbeddings(dims=128, bigrams=False))
    config = json.loads(json.dumps(adapter.get_config()))  # what Chroma persists
    rebuilt = ChromaEmbeddingAdapter.build_from_config(config)
    assert rebuilt.embeddings == HashingEmbeddings(dims=128, bigrams=False)
    assert not adapter.is_legacy() and adapter.name() == rebuilt.name()
    with pytest.raises(ValueError, match="cannot rebuild"):
        ChromaEmbeddingAdapter.build_from_config({"class": "somewhere.Unknown", "settings": {"model": "x"}})
    with pytest.raises(TypeError):
        ChromaEmbeddingAdapter(object())


# Retrieval ----------------------------------------------------------------------------
def test_relevant_success_entry_ranks_first(store):
    store.add("kvstore", SCRAPER_SUCCESS)
    store.add("kvstore", KV_SUCCESS)
    found = store.retrieve("kvstore", REQUIREMENT, "success", k=3)
    assert [r.entry for r in found] == [KV_SUCCESS, SCRAPER_SUCCESS]
    assert found[0].similarity > found[1].similarity + 0.1
    assert all(-1e-6 <= r.similarity <= 1 + 1e-6 for r in found)
    # Not an artefact of insertion order: a scraper requirement ranks the other way round.
    scraper = store.retrieve("kvstore", "A scraper that downloads HTML pages and extracts links", "success")
    assert scraper[0].entry == SCRAPER_SUCCESS
    assert [r.entry for r in store.retrieve("kvstore", REQUIREMENT, "success", k=1)] == [KV_SUCCESS]


def test_retrieve_filters_by_task_kind_and_run(store):
    store.add("kvstore", KV_SUCCESS, run_id="run-a")
    store.add("kvstore", KV_FAILURE, run_id="run-a")
    later = KV_SUCCESS.model_copy(update={"attempt": 2, "score": 0.9})
    store.add("kvstore", later, run_id="run-b")
    store.add("other-task", KV_SUCCESS, run_id="run-a")  # same text, another task

    failures = store.retrieve("kvstore", REQUIREMENT, "failure", k=5)
    assert [r.entry for r in failures] == [KV_FAILURE]
    successes = store.retrieve("kvstore", REQUIREMENT, "success", k=5)
    assert sorted(r.entry.attempt for r in successes) == [1, 2]
    assert {r.task_id for r in successes} == {"kvstore"}
    in_run = store.retrieve("kvstore", REQUIREMENT, "success", k=5, run_id="run-b")
    assert [(r.entry, r.run_id) for r in in_run] == [(later, "run-b")]
    assert store.retrieve("missing-task", REQUIREMENT, "success") == []
    assert store.retrieve("kvstore", REQUIREMENT, "success", k=0) == []
    with pytest.raises(ProjectGenError, match="unknown knowledge kind"):
        store.retrieve("kvstore", REQUIREMENT, "partial")  # type: ignore[arg-type]


def test_entries_in_attempt_order_and_counts(store):
    third = KV_FAILURE.model_copy(update={"attempt": 3})
    for entry in (third, SCRAPER_SUCCESS, KV_FAILURE, KV_SUCCESS):
        store.add("kvstore", entry, run_id="r1")
    assert store.entries("kvstore") == [KV_SUCCESS, KV_FAILURE, SCRAPER_SUCCESS, third]
    assert store.entries("kvstore", kind="failure") == [KV_FAILURE, third]
    assert store.entries("kvstore", run_id="other") == []
    assert (store.count(), store.count("kvstore", "success"), store.count("kvstore", run_id="r1")) == (4, 2, 4)
    assert store.delete("kvstore", run_id="r2") == 0 and store.delete("kvstore") == 4
    assert store.count() == 0


def test_re_adding_an_entry_after_a_resume_does_not_duplicate(store):
    first = store.add("kvstore", KV_SUCCESS, run_id="run-1")
    again = store.add("kvstore", KV_SUCCESS, run_id="run-1")
    assert first == again == knowledge_id("kvstore", "success", 1, "run-1")
    revised = KV_SUCCESS.model_copy(update={"carry_over": ["a re-extracted entry replaces the old one"]})
    store.add("kvstore", revised, run_id="run-1")
    assert store.entries("kvstore") == [revised]
    # Another run, kind or attempt is another entry.
    store.add("kvstore", KV_SUCCESS, run_id="run-2")
    store.add("kvstore", KV_FAILURE, run_id="run-1")
    assert store.count("kvstore") == 3


def test_store_persists_across_clients_and_processes(tmp_path):
    path = tmp_path / "knowledge"
    with KnowledgeStore.persistent(path) as first:
        first.add("kvstore", KV_SUCCESS, run_id="r")
        first.add("kvstore", SCRAPER_SUCCESS, run_id="r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-opening a persisted collection must not warn
        warnings.filterwarnings("ignore", message=FALLBACK_NOTICE)  # only the default's documented fallback may
        with KnowledgeStore.persistent(path) as second:
            assert second.entries("kvstore") == [KV_SUCCESS, SCRAPER_SUCCESS]
            assert second.retrieve("kvstore", REQUIREMENT, "success", k=1)[0].entry == KV_SUCCESS
    # A new process: nothing is shared in memory, and the default embedding is never needed.
    script = (
        "import sys, warnings, json\n"
        "warnings.simplefilter('error')\n"
        f"warnings.filterwarnings('ignore', message={FALLBACK_NOTICE!r})\n"
        "from projectgen.memory import KnowledgeStore\n"
        "with KnowledgeStore.persistent(sys.argv[1]) as s:\n"
        "    found = s.retrieve('kvstore', sys.argv[2], 'success', k=2)\n"
        "    print(json.dumps([r.entry.task_summary for r in found]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(path), REQUIREMENT],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [KV_SUCCESS.task_summary, SCRAPER_SUCCESS.task_summary]


# Other embeddings -----------------------------------------------------------------------
class CountingEmbeddings:
    """A LangChain-style `Embeddings` that records what it embeds."""

    def __init__(self) -> None:
        from langchain_core.embeddings import DeterministicFakeEmbedding

        self.fake = DeterministicFakeEmbedding(size=48)
        self.documents: list[str] = []
        self.queries: list[str] = []

    def embed_documents(self, texts):
        self.documents += texts
        return self.fake.embed_documents(texts)

    def embed_query(self, text):
        self.queries.append(text)
        return self.fake.embed_query(text)


def test_any_langchain_embeddings_can_replace_the_default(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    counting = CountingEmbeddings()
    with KnowledgeStore.persistent(tmp_path / "k", embeddings=counting, collection="fake-embedded") as store:
        store.add("kvstore", KV_SUCCESS)
        found = store.retrieve("kvstore", REQUIREMENT, "success")
    assert [r.entry for r in found] == [KV_SUCCESS]
    assert counting.documents == [KV_SUCCESS.text()] and counting.queries == [REQUIREMENT]

    fake = DeterministicFakeEmbedding(size=48)
    with KnowledgeStore.persistent(tmp_path / "k2", embeddings=fake) as store:
        store.add("kvstore", KV_FAILURE)
        assert store.retrieve("kvstore", REQUIREMENT, "failure")[0].entry == KV_FAILURE
        stored = store._collection.configuration_json["embedding_function"]
    assert stored["name"] == ChromaEmbeddingAdapter.NAME and stored["config"] == describe_embeddings(fake)
    assert stored["config"]["settings"] == {"size": 48}


def test_opening_a_store_with_other_embeddings_is_refused(tmp_path):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    path = tmp_path / "k"
    with KnowledgeStore.persistent(path, embeddings="hashing") as store:
        store.add("kvstore", KV_SUCCESS)
    built = r"built with embedding hashing \(feature-hashing\+bigrams, 1024 dims, version 1\)"
    with pytest.raises(ProjectGenError, match=built + r", not langchain_core\.embeddings\.fake\.DeterministicFakeEmbedding"
                       r" \(size=8, 8 dims\); open it with `--embedding hashing` \(Python: embeddings='hashing'\) or use"):
        KnowledgeStore.persistent(path, embeddings=DeterministicFakeEmbedding(size=8))
    with pytest.raises(ProjectGenError, match=built + r", not hashing \(feature-hashing\+bigrams, 512 dims"):
        KnowledgeStore.persistent(path, embeddings=HashingEmbeddings(dims=512))
    with KnowledgeStore.persistent(path, embeddings=HashingEmbeddings(dims=1024)) as same:
        assert same.count() == 1
    # A store of a custom object names no --embedding: only the same object opens it.
    with KnowledgeStore.persistent(tmp_path / "fake", embeddings=DeterministicFakeEmbedding(size=8)) as store:
        store.add("kvstore", KV_SUCCESS)
    with pytest.raises(ProjectGenError, match=r"DeterministicFakeEmbedding \(size=8, 8 dims\), not hashing .*"
                       "open it with the same embeddings object"):
        KnowledgeStore.persistent(tmp_path / "fake", embeddings="hashing")


# Errors -------------------------------------------------------------------------------
def test_unreachable_server_is_a_clear_error():
    with socket.socket() as probe:  # a local port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ProjectGenError, match=rf"http://127.0.0.1:{port}: cannot connect"):
        KnowledgeStore.server(f"http://127.0.0.1:{port}")


def test_server_urls_are_parsed():
    assert parse_server_url("http://chroma.internal") == ("chroma.internal", 8000, False)
    assert parse_server_url("http://localhost:9000/") == ("localhost", 9000, False)
    assert parse_server_url("https://chroma.example.org") == ("chroma.example.org", 443, True)
    assert parse_server_url("https://10.0.0.5:8443") == ("10.0.0.5", 8443, True)
    for bad in ("localhost:8000", "ftp://host", "http://host/prefix", "http://host:notaport"):
        with pytest.raises(ProjectGenError):
            parse_server_url(bad)


def test_corrupt_or_wrong_store_paths_are_clear_errors(tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a store")
    with pytest.raises(ProjectGenError, match="not a folder"):
        KnowledgeStore.persistent(a_file)
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "chroma.sqlite3").write_bytes(b"this is not an SQLite database" * 50)
    with pytest.raises(ProjectGenError, match=r"corrupt: cannot open: .*not a database"):
        KnowledgeStore.persistent(corrupt)
    with pytest.raises(ProjectGenError, match="cannot open collection"):
        KnowledgeStore.persistent(tmp_path / "ok", collection="x")  # Chroma names need 3+ characters


def test_importing_projectgen_memory_does_not_import_chromadb(tmp_path):
    script = ("import sys, projectgen.memory\n"
              "print(sorted({m.split('.')[0] for m in sys.modules} & {'chromadb', 'langchain_core', 'numpy'}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_chroma_server_store(tmp_path):
    """`KnowledgeStore.server` against a real local `chroma run` (slow: starts a server)."""
    with chroma_server(tmp_path / "server") as url:
        with KnowledgeStore.server(url) as store:
            store.add("kvstore", SCRAPER_SUCCESS)
            store.add("kvstore", KV_SUCCESS)
            store.add("kvstore", KV_SUCCESS)
        with KnowledgeStore.server(url) as again:
            assert again.count("kvstore") == 2
            assert again.retrieve("kvstore", REQUIREMENT, "success", k=1)[0].entry == KV_SUCCESS
