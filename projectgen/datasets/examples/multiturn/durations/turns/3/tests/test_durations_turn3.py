from durations import parse_duration


def test_days_and_weeks():
    assert parse_duration("1d") == 86400
    assert parse_duration("2w") == 1209600
    assert parse_duration("1w2d3h") == 788400


def test_earlier_units_still_work():
    assert parse_duration("1h 30m 15s") == 5415
