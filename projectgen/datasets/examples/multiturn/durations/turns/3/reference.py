"""Durations written as text, in seconds."""
import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PART = re.compile(r"(\d+)\s*([smhdw])")


def parse_duration(text: str) -> int:
    """Seconds in a duration such as "90s", "1h30m" or "1w 2d" (the parts are added)."""
    return sum(int(number) * _UNITS[unit] for number, unit in _PART.findall(text))
