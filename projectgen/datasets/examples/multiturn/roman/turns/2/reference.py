"""Roman numerals."""

_NUMERALS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number: int) -> str:
    """The Roman numeral of `number` (1 to 3999), e.g. 1994 -> "MCMXCIV"."""
    parts = []
    for value, numeral in _NUMERALS:
        count, number = divmod(number, value)
        parts.append(numeral * count)
    return "".join(parts)


def from_roman(numeral: str) -> int:
    """The number a Roman numeral stands for, e.g. "MCMXCIV" -> 1994 (case and surrounding spaces ignored)."""
    values = [_VALUES[letter] for letter in numeral.strip().upper()]
    total = 0
    for index, value in enumerate(values):
        following = values[index + 1] if index + 1 < len(values) else 0
        total += -value if value < following else value
    return total
