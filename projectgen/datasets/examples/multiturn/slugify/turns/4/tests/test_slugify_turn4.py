import pytest

from slugify import slugify


def test_cut_between_words():
    assert slugify("The quick brown fox", max_length=12) == "the-quick"
    assert slugify("The quick brown fox", max_length=9) == "the-quick"
    assert slugify("The quick brown fox", max_length=100) == "the-quick-brown-fox"


def test_a_first_word_too_long_is_cut():
    assert slugify("Supercalifragilistic", max_length=5) == "super"


def test_max_length_must_be_positive():
    with pytest.raises(ValueError):
        slugify("abc", max_length=0)


def test_earlier_behaviour_is_kept():
    assert slugify("Crème Brûlée") == "creme-brulee"
    assert slugify("Crème Brûlée", max_length=None) == "creme-brulee"
