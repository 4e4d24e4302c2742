import pytest
from conftest import FIXTURES_DIR

from gauge import word_count


def test_counts_the_fixture():
    assert word_count((FIXTURES_DIR / "words.txt").read_text()) == 3


def test_counts_nothing():
    assert word_count("") == 0


@pytest.mark.slow
def test_slow_runs_only_with_runslow():
    assert word_count("a " * 10**6) == 10**6
