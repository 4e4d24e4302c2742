"""Count words in a text."""
from tokens import words


def count_words(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in words(text):
        counts[word] = counts.get(word, 0) + 1
    return counts
