"""Temperature conversions (the reference of the frozen-total task shape)."""


def to_fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def to_celsius(fahrenheit: float) -> float:
    return (fahrenheit - 32) * 5 / 9


def describe(celsius: float) -> str:
    if celsius <= 0:
        return "freezing"
    return "hot" if celsius >= 30 else "mild"
