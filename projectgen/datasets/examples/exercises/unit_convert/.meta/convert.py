"""Converting lengths between units."""
import re

from .units import factor

_QUANTITY = re.compile(r"^\s*([+-]?\d+(?:\.\d+)?)\s+([A-Za-z]+)\s*$")


def convert(value, from_unit, to_unit):
    return value * factor(from_unit) / factor(to_unit)


def parse_quantity(text):
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    return float(match.group(1)), match.group(2)
