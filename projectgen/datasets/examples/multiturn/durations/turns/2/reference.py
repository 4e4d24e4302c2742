"""Durations written as text, in seconds."""
import re

_UNITS = {"s": 1, "m": 60, "h": 3600}
_PART = re.compile(r"(\d+)\s*([smh])")


def parse_duration(text: str) -> int:
    """Seconds in a duration such as "90s", "1h30m" or "1h 30m 15s" (the parts are added)."""
    return sum(int(number) * _UNITS[unit] for number, unit in _PART.findall(text))
