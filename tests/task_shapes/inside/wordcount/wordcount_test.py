from wordcount import count_words


def test_one_word():
    assert count_words("word") == {"word": 1}


def test_case_insensitive():
    assert count_words("Go go GO") == {"go": 3}


def test_apostrophes_and_punctuation():
    assert count_words("'Don't' stop, don't!") == {"don't": 2, "stop": 1}


def test_sample_file(sample_text):
    assert count_words(sample_text) == {"the": 3, "cat": 1, "and": 1, "hat": 1, "end": 1}


def test_empty():
    assert count_words("") == {}
