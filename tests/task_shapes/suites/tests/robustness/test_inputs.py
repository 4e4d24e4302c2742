import pytest

from tally import Tally


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_bad_counts_are_refused(n):
    with pytest.raises(ValueError):
        Tally().add("a", n)


def test_unhashable_items_are_refused():
    with pytest.raises(TypeError):
        Tally().add(["a"])
