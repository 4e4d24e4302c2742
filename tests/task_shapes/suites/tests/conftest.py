import pytest

from tally import Tally


@pytest.fixture
def sample():
    tally = Tally()
    for word in "b a b c a b".split():
        tally.add(word)
    return tally
