import pytest

from textkit.wrap import wrap_words


def test_words_packed_greedily():
    assert wrap_words("the quick brown fox", 10) == ["the quick", "brown fox"]
    assert wrap_words("  ", 4) == []


def test_long_words_cut():
    assert wrap_words("a verylongword b", 5) == ["a", "veryl", "ongwo", "rd b"]


def test_width_below_one():
    with pytest.raises(ValueError):
        wrap_words("a b", 0)
