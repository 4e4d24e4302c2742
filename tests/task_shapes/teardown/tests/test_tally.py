import warnings

import pytest

from tally import mean, total


@pytest.fixture
def journal():
    entries = []
    yield entries
    if not entries:  # like pytest-benchmark's "fixture was not used": under filterwarnings=error, a teardown error
        warnings.warn("the journal was never written", UserWarning)


def test_total_passes_then_its_teardown_errs(journal):
    assert total([1, 2, 3]) == 6


def test_mean_fails_then_its_teardown_errs(journal):
    assert mean([1, 2]) == 2  # the reference gives 1.5


def test_mean_passes(journal):
    journal.append("mean")
    assert mean([2, 4]) == 3


def test_empty_mean_raises():
    with pytest.raises(ValueError):
        mean([])


@pytest.mark.skip(reason="not on this platform")
def test_skipped():
    assert total([]) == 0
