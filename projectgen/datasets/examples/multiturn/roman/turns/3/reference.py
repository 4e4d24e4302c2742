"""Roman numerals, from 1 to 3999, in the standard form only."""

_NUMERALS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number: int) -> str:
    """The Roman numeral of `number` (an int from 1 to 3999), e.g. 1994 -> "MCMXCIV"."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 3999:
        raise ValueError(f"only whole numbers from 1 to 3999 have a Roman numeral, not {number!r}")
    parts = []
    for value, numeral in _NUMERALS:
        count, number = divmod(number, value)
        parts.append(numeral * count)
    return "".join(parts)


def from_roman(numeral: str) -> int:
    """The number a standard Roman numeral stands for, e.g. "MCMXCIV" -> 1994; ValueError for anything else."""
    text = numeral.strip().upper() if isinstance(numeral, str) else ""
    if not text or any(letter not in _VALUES for letter in text):
        raise ValueError(f"not a Roman numeral: {numeral!r}")
    values = [_VALUES[letter] for letter in text]
    total = 0
    for index, value in enumerate(values):
        following = values[index + 1] if index + 1 < len(values) else 0
        total += -value if value < following else value
    if not 1 <= total <= 3999 or to_roman(total) != text:
        raise ValueError(f"not a Roman numeral in standard form: {numeral!r}")
    return total
