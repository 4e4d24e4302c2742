import pytest

from wordfreq import count_words, frequencies, tokenize, top_n


def test_tokenize_splits_on_punctuation_hyphens_and_underscores():
    assert tokenize("well-known snake_case, end.") == ["well", "known", "snake", "case", "end"]


def test_tokenize_strips_outer_apostrophes_and_keeps_joined_ones():
    assert tokenize("'quoted' rock'n'roll it''s") == ["quoted", "rock'n'roll", "it", "s"]


def test_tokenize_handles_unicode_and_numbers():
    assert tokenize("Café naïve Straße 2024") == ["Café", "naïve", "Straße", "2024"]


def test_tokenize_empty_and_wordless_text():
    assert tokenize("") == []
    assert tokenize("  ... --- !!! ") == []


def test_tokenize_rejects_non_strings():
    with pytest.raises(TypeError):
        tokenize(None)
    with pytest.raises(TypeError):
        tokenize(b"bytes")


def test_count_words_case_sensitive():
    assert count_words("Go go GO go", ignore_case=False) == {"Go": 1, "go": 2, "GO": 1}


def test_count_words_stopwords_follow_case_rule():
    text = "The quick fox and THE lazy dog"
    assert count_words(text, stopwords=["THE", "and"]) == {"quick": 1, "fox": 1, "lazy": 1, "dog": 1}
    assert count_words(text, ignore_case=False, stopwords={"The"}) == {
        "quick": 1, "fox": 1, "and": 1, "THE": 1, "lazy": 1, "dog": 1,
    }


def test_count_words_order_of_first_appearance_and_empty():
    assert list(count_words("b a b c a")) == ["b", "a", "c"]
    assert count_words("") == {}
    assert count_words("the the", stopwords=("the",)) == {}


def test_top_n_edge_values_of_n():
    counts = {"a": 1, "b": 3}
    assert top_n(counts, 0) == []
    assert top_n(counts, 10) == [("b", 3), ("a", 1)]
    assert top_n({}, 2) == []
    assert counts == {"a": 1, "b": 3}


def test_top_n_rejects_bad_n():
    with pytest.raises(ValueError):
        top_n({"a": 1}, -1)
    with pytest.raises(TypeError):
        top_n({"a": 1}, 1.5)
    with pytest.raises(TypeError):
        top_n({"a": 1}, True)


def test_frequencies():
    result = frequencies({"a": 1, "b": 3})
    assert result == {"a": 0.25, "b": 0.75}
    assert list(result) == ["a", "b"]
    assert frequencies({}) == {}
    assert frequencies({"a": 0}) == {}
