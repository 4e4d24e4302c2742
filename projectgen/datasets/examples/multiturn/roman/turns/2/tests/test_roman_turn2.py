from roman import from_roman, to_roman


def test_known_numerals_are_read():
    assert from_roman("MCMXCIV") == 1994
    assert from_roman("IV") == 4
    assert from_roman("MMMCMXCIX") == 3999


def test_case_and_whitespace_are_ignored():
    assert from_roman("xiv") == 14
    assert from_roman("  MMXXIV \n") == 2024


def test_round_trip():
    for number in range(1, 4000):
        assert from_roman(to_roman(number)) == number
