from durations import parse_duration


def test_parts_are_added():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("2m5s") == 125


def test_parts_may_be_separated_by_spaces():
    assert parse_duration("1h 30m 15s") == 5415


def test_one_part_still_works():
    assert parse_duration("5m") == 300
