import pytest

from minicalc import evaluate


def test_precedence() -> None:
    assert evaluate("1 + 2 * 3") == 7


def test_parentheses() -> None:
    assert evaluate("(1 + 2) * 3") == 9


def test_malformed() -> None:
    with pytest.raises(ValueError):
        evaluate("1 +")
