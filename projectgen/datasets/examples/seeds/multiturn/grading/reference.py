"""Letter grades."""

_BANDS = ((90, "A"), (80, "B"), (70, "C"), (60, "D"))


def letter_grade(score: float) -> str:
    """The letter of `score` (0 to 100), with "+" in the top three points of a band and "-" in its bottom three."""
    if not 0 <= score <= 100:
        raise ValueError(f"a score is between 0 and 100, got {score}")
    for floor, letter in _BANDS:
        if score >= floor:
            above = score - floor
            if above >= 7:
                return letter + "+"
            if above < 3:
                return letter + "-"
            return letter
    return "F"
