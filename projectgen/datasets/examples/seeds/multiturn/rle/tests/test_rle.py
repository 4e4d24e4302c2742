import pytest

from rle import encode


def test_runs():
    assert encode("aaab") == "a3b"
    assert encode("aabbbcccc") == "a2b3c4"


def test_single_characters_alone():
    assert encode("abc") == "abc"
    assert encode("") == ""


def test_spaces_are_characters():
    assert encode("a  b") == "a 2b"


def test_digits_refused():
    with pytest.raises(ValueError):
        encode("a1")
