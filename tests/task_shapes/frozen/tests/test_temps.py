import pytest

from temps import describe, to_celsius, to_fahrenheit


def test_boiling():
    assert to_fahrenheit(100) == 212


def test_round_trip():
    assert to_celsius(to_fahrenheit(37.5)) == pytest.approx(37.5)


def test_describe():
    assert [describe(t) for t in (-5, 0, 12, 30)] == ["freezing", "freezing", "mild", "hot"]


@pytest.mark.network
def test_against_a_weather_service():
    raise AssertionError("deselected by the benchmark's pytest.ini: never runs")
