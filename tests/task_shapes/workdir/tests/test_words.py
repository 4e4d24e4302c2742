import os

from wordlist import load, longest


def test_runs_from_the_tests_folder():
    assert os.path.basename(os.getcwd()) == "tests"


def test_load_by_a_relative_path():
    assert load("fixtures/words.txt")[:3] == ["the", "quick", "brown"]


def test_longest_of_the_file():
    assert longest(load("fixtures/words.txt")) == "quick"


def test_longest_of_nothing():
    assert longest([]) is None
