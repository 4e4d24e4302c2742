from slugify import slugify


def test_accents_are_dropped():
    assert slugify("Crème Brûlée") == "creme-brulee"
    assert slugify("Ångström") == "angstrom"
    assert slugify("Ça va?") == "ca-va"


def test_other_non_ascii_characters_separate_words():
    assert slugify("5€ each") == "5-each"
    assert slugify("tokyo日本osaka") == "tokyo-osaka"


def test_earlier_behaviour_is_kept():
    assert slugify("Hello, World!") == "hello-world"
