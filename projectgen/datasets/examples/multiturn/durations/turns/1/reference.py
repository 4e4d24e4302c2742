"""Durations written as text, in seconds."""

_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> int:
    """Seconds in a duration such as "90s", "5m" or "2h"."""
    text = text.strip()
    return int(text[:-1]) * _UNITS[text[-1]]
