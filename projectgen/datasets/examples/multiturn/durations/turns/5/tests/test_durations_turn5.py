import pytest

from durations import format_duration, parse_duration


def test_format_known_values():
    assert format_duration(5400) == "1h30m"
    assert format_duration(90061) == "1d1h1m1s"
    assert format_duration(1209600) == "2w"
    assert format_duration(0) == "0s"


def test_format_then_parse_is_the_identity():
    for seconds in (1, 59, 61, 3600, 86399, 788400, 10**7):
        assert parse_duration(format_duration(seconds)) == seconds


def test_negative_durations_are_refused():
    with pytest.raises(ValueError):
        format_duration(-1)


def test_parsing_still_refuses_malformed_text():
    with pytest.raises(ValueError):
        parse_duration("5x")
