"""A number held within bounds."""


def clamp(value: float, low: float, high: float) -> float:
    """`value`, or the nearer bound when it lies outside them."""
    return max(low, min(high, value))
