"""Scores to letters."""


def letter(score: float) -> str:
    if not 0 <= score <= 100:
        raise ValueError(f"score out of range: {score}")
    for bound, name in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if score >= bound:
            return name
    return "F"


def average(scores: list[float]) -> float:
    if not scores:
        raise ValueError("no scores")
    return sum(scores) / len(scores)
