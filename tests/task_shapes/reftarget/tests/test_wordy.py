import wordy


def test_longest():
    assert wordy.longest(["a", "abc", "xyz", "ab"]) == "abc"


def test_longest_of_nothing():
    assert wordy.longest([]) is None


def test_initials():
    assert wordy.initials("portable network graphics") == "PNG"


def test_the_package_is_the_src_layouts():
    assert wordy.__file__.replace("\\", "/").endswith("src/wordy/__init__.py")
