"""Fixtures shared by the test modules."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Task folders written for the tests (tests/task_shapes, the hostile set's tasks and candidates) hold test files
# of their own, run only in the sandbox.
collect_ignore = ["task_shapes", "evaluation/hostile_set"]

# The modules that take longest in all (`pytest --durations`), collected first: `make test` hands whole modules
# to its workers in collection order, and one of these started last keeps one core busy while the other idles.
LONG_MODULES = ("test_benchmarks.py", "runs/test_resume.py", "cli/test_cli_run.py", "evaluation/test_languages.py",
                "experiments/test_experiments.py", "experiments/test_refinement.py", "cli/test_cli_interrupt.py",
                "construction/test_construct_multiturn.py", "evaluation/test_task_shapes.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `LONG_MODULES` first, longest first; every other module after them in its usual order."""
    here = Path(__file__).resolve().parent

    def rank(item: pytest.Item) -> int:
        module = item.path.resolve().relative_to(here).as_posix() if item.path.is_relative_to(here) else ""
        return LONG_MODULES.index(module) if module in LONG_MODULES else len(LONG_MODULES)

    items.sort(key=rank)  # stable: a module's tests keep their order

# The published benchmark data lives next to the project, read-only: ../shared/datasets (a work tree
# elsewhere names it with PROJECTGEN_TEST_SHARED_DATASETS), or where `projectgen datasets fetch` installed it
# (read before any test changes the cache root).
SHARED_DATASETS = Path(os.environ.get("PROJECTGEN_TEST_SHARED_DATASETS")
                       or Path(__file__).resolve().parents[1].parent / "shared" / "datasets")


def fetched_benchmarks() -> dict[str, Path]:
    """Data folder name (DevBench, CodeProjectEval) -> its folder, for each benchmark `datasets fetch` installed."""
    from projectgen.datasets.catalog import fetched_record, install_root, published_datasets

    found = {}
    for dataset in published_datasets().values():
        if fetched_record(dataset) is not None:
            found[dataset.folder_name] = install_root(dataset) / dataset.folder_name
    return found


FETCHED_BENCHMARKS = {} if SHARED_DATASETS.is_dir() else fetched_benchmarks()


@pytest.fixture(scope="session")
def shared_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CodeProjectEval/DevBench data folder: ../shared/datasets, else a folder of links to the fetched
    benchmarks; skips the test when neither is there."""
    if SHARED_DATASETS.is_dir():
        return SHARED_DATASETS
    if not FETCHED_BENCHMARKS:
        pytest.skip(f"benchmark data not found at {SHARED_DATASETS}, nor fetched (`projectgen datasets fetch`)")
    root = tmp_path_factory.mktemp("fetched-datasets")
    for name, folder in FETCHED_BENCHMARKS.items():
        (root / name).symlink_to(folder, target_is_directory=True)
    return root


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for checkpoint tests (see tests/postgres_server.py); skips without one."""
    from postgres_server import postgres_server

    with postgres_server() as url:
        if url is None:
            pytest.skip("no PostgreSQL here: set PROJECTGEN_TEST_POSTGRES_URL or install Debian's postgresql")
        yield url


@pytest.fixture
def offline(monkeypatch):
    """No network but loopback, and Chroma's default (model-downloading) embedding function never runs
    (the knowledge store's tests: tests/memory)."""
    from chromadb.api.types import DefaultEmbeddingFunction
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    def forbidden(self, input):  # Chroma checks an embedding function's signature
        raise AssertionError("Chroma's default embedding function was used")

    def forbidden_model(self, *args, **kwargs):
        raise AssertionError("Chroma's default embedding model was constructed")

    monkeypatch.setattr(DefaultEmbeddingFunction, "__call__", forbidden)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "__init__", forbidden_model)
    import socket

    real_connect = socket.socket.connect

    def loopback_only(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"network access to {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


@pytest.fixture(scope="session")
def env_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sandbox's environment cache of the test run (`--cache-dir`, `RunnerSettings.cache_dir`), shared by
    every module and by pytest-xdist's workers: each test environment (and each reference's expected tests)
    is built once per run, not once per module. Builds and measurements are locked per key across
    processes (`EnvironmentCache.ensure`, `ExpectationStore.locked`) and keyed by what they hold, so no module
    can see a wrong one; the machine's own cache is never used."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common folder
    path = root / "shared-env-cache"
    path.mkdir(exist_ok=True)
    return path


# The bundled kvstore task and a sandbox runner on the run's environment cache: what most graph and
# run tests start from (a module defining its own `task` or `runner` overrides these).
@pytest.fixture(scope="module")
def task():
    from projectgen.datasets.examples import example_task_path
    from projectgen.datasets.loaders import load_task

    return load_task(example_task_path("kvstore"))


@pytest.fixture(scope="module")
def runner(env_cache: Path):
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    return SandboxRunner(RunnerSettings(cache_dir=env_cache))
