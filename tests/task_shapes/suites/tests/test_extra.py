import pytest


def test_most_common(sample):
    assert sample.most_common(2) == [("b", 3), ("a", 2)]


@pytest.mark.xfail(reason="most_common(0) is not specified")
def test_most_common_zero(sample):
    assert sample.most_common(0) is None
