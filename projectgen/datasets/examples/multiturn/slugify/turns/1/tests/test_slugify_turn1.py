from slugify import slugify


def test_words_are_lowercased_and_joined_with_hyphens():
    assert slugify("Hello World") == "hello-world"
    assert slugify("Python") == "python"


def test_extra_whitespace_adds_no_hyphens():
    assert slugify("  Hello   World ") == "hello-world"
    assert slugify("a\tb\nc") == "a-b-c"


def test_no_words_give_an_empty_slug():
    assert slugify("") == ""
    assert slugify("   ") == ""
