import pytest

from durations import parse_duration


@pytest.mark.parametrize("text", ["", "   ", "15", "5x", "1h and 5m", "1h2h", "5m1h", "h"])
def test_malformed_durations_are_refused(text):
    with pytest.raises(ValueError) as raised:
        parse_duration(text)
    assert repr(text) in str(raised.value)


def test_valid_durations_still_parse():
    assert parse_duration(" 1w 2d 3h ") == 788400
    assert parse_duration("90s") == 90
