from durations import parse_duration


def test_one_number_and_one_unit():
    assert parse_duration("90s") == 90
    assert parse_duration("5m") == 300
    assert parse_duration("2h") == 7200
    assert parse_duration("0s") == 0
