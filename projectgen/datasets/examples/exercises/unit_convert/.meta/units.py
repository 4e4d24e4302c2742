"""Units of length and their size in metres."""


class UnknownUnitError(ValueError):
    """A unit that is not in the table."""


FACTORS = {
    "mm": 0.001,
    "cm": 0.01,
    "m": 1.0,
    "km": 1000.0,
    "in": 0.0254,
    "ft": 0.3048,
    "mi": 1609.344,
}


def factor(unit):
    try:
        return FACTORS[unit]
    except KeyError:
        raise UnknownUnitError(f"unknown unit: {unit}") from None
