from pathlib import Path

import pytest


@pytest.fixture
def sample_text():
    return (Path(__file__).parent / "data" / "sample.txt").read_text(encoding="utf-8")
