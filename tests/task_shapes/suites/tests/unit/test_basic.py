from tally import Tally


def test_add_and_count():
    tally = Tally()
    tally.add("x")
    tally.add("x", 2)
    assert tally.count("x") == 3


def test_missing_is_zero():
    assert Tally().count("nothing") == 0


def test_total():
    tally = Tally()
    tally.add("a", 2)
    tally.add("b")
    assert tally.total == 3
