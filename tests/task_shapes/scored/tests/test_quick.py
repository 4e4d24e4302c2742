from grades import letter


def test_an_a():
    assert letter(95) == "A"
