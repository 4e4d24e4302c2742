from slugify import slugify


def test_punctuation_separates_words():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("rock & roll") == "rock-roll"
    assert slugify("it's 2024") == "it-s-2024"


def test_no_hyphen_at_either_end():
    assert slugify("--Hello--") == "hello"
    assert slugify("!!!") == ""


def test_earlier_behaviour_is_kept():
    assert slugify("  Hello   World ") == "hello-world"
