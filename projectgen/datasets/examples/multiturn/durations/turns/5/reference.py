"""Durations written as text, in seconds, and back."""
import re

_UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_ORDER = list(_UNITS)  # largest first
_PART = re.compile(r"\s*(\d+)\s*([a-zA-Z]+)")


def parse_duration(text: str) -> int:
    """Seconds in a duration such as "90s", "1h30m" or "1w 2d"; ValueError for anything malformed."""
    position, total, last = 0, 0, -1
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"empty duration: {text!r}")
    while position < len(stripped):
        match = _PART.match(stripped, position)
        if match is None:
            raise ValueError(f"malformed duration {text!r} at {stripped[position:]!r}")
        number, unit = match.groups()
        if unit not in _UNITS:
            raise ValueError(f"unknown unit {unit!r} in duration {text!r}")
        rank = _ORDER.index(unit)
        if rank <= last:
            raise ValueError(f"unit {unit!r} repeated or out of order in duration {text!r}")
        last = rank
        total += int(number) * _UNITS[unit]
        position = match.end()
    return total


def format_duration(seconds: int) -> str:
    """The shortest text `parse_duration` reads back as `seconds`: "1h30m", "2w", "0s"."""
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative: {seconds}")
    parts = []
    for unit in _ORDER:
        count, seconds = divmod(seconds, _UNITS[unit])
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
