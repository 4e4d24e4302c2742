from tally import Tally


def test_counts_are_independent():
    first, second = Tally(), Tally()
    first.add("a")
    assert second.count("a") == 0
