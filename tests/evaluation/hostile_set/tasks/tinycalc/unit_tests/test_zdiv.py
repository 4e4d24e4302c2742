import pytest

from tinycalc import div


def test_div():
    assert div(9, 2) == 4
    with pytest.raises(ZeroDivisionError):
        div(1, 0)
