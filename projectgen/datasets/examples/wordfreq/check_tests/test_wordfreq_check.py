"""Visible acceptance checks for wordfreq."""
from wordfreq import count_words, tokenize, top_n


def test_tokenize_keeps_inner_apostrophes():
    assert tokenize("Don't stop - it's 5 o'clock!") == ["Don't", "stop", "it's", "5", "o'clock"]


def test_count_words_ignores_case_by_default():
    assert count_words("The cat and the hat. THE END!") == {"the": 3, "cat": 1, "and": 1, "hat": 1, "end": 1}


def test_top_n_breaks_ties_alphabetically():
    counts = {"pear": 2, "apple": 2, "fig": 5, "kiwi": 1}
    assert top_n(counts, 3) == [("fig", 5), ("apple", 2), ("pear", 2)]
