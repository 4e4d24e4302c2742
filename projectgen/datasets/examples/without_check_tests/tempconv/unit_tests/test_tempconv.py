import pytest

from tempconv import normalize, parse_reading, to_celsius, to_fahrenheit


def test_conversions():
    assert to_fahrenheit(-40) == -40
    assert to_celsius(50) == 10


def test_parse_reading_forms():
    assert parse_reading("+3.25c") == (3.25, "C")
    assert parse_reading("70 F") == (70.0, "F")


@pytest.mark.parametrize("text", ["", "C", "21.5K", "21.5 C C", "1e3C"])
def test_bad_readings(text):
    with pytest.raises(ValueError):
        parse_reading(text)


def test_normalize():
    assert normalize("21.5C", "F") == 70.7
    assert normalize("70.7F", "C") == 21.5
    assert normalize("10C", "C") == 10.0
    with pytest.raises(ValueError):
        normalize("10C", "K")
