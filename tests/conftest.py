"""Fixtures shared by the test modules."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# Task folders written for the tests (tests/task_shapes) hold test files of their own, run only in the sandbox.
collect_ignore = ["task_shapes"]

# The published benchmark data lives next to the project, read-only: ../shared/datasets.
SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The CodeProjectEval/DevBench data folder; skips the test when it is absent."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATASETS}")
    return SHARED_DATASETS


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for checkpoint tests (see tests/postgres_server.py); skips without one."""
    from postgres_server import postgres_server

    with postgres_server() as url:
        if url is None:
            pytest.skip("no PostgreSQL here: set PROJECTGEN_TEST_POSTGRES_URL or install Debian's postgresql")
        yield url
