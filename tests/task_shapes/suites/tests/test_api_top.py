def test_public_name():
    import tally

    assert tally.__all__ == ["Tally"]
