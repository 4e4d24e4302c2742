import pytest

from roman import from_roman, to_roman


@pytest.mark.parametrize("number", [0, -1, 4000, 2.0, True, "12", None])
def test_to_roman_refuses_what_has_no_numeral(number):
    with pytest.raises(ValueError):
        to_roman(number)


@pytest.mark.parametrize("numeral", ["IIII", "VX", "IC", "MMMM", "", "  ", "ABC", "XIIV"])
def test_from_roman_refuses_non_standard_numerals(numeral):
    with pytest.raises(ValueError):
        from_roman(numeral)


def test_valid_numerals_still_work():
    assert from_roman(" mcmxciv ") == 1994
    assert to_roman(3999) == "MMMCMXCIX"
