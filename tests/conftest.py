"""Fixtures shared by the test modules."""
from __future__ import annotations

from pathlib import Path

import pytest

# The published benchmark data lives next to the project, read-only: ../shared/datasets.
SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The CodeProjectEval/DevBench data folder; skips the test when it is absent."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATASETS}")
    return SHARED_DATASETS
