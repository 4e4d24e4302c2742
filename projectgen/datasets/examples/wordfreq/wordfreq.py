"""Word frequency helpers: split text into words, count them, rank the most frequent."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# A word: letters/digits (not "_"), optionally joined by single apostrophes ("don't").
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def tokenize(text: str) -> list[str]:
    """Return the words of `text` in order, with their original case."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    return _WORD.findall(text)


def count_words(
    text: str, *, ignore_case: bool = True, stopwords: Iterable[str] | None = None
) -> dict[str, int]:
    """Count the words of `text`, in order of first appearance, skipping stopwords."""
    normalize = str.lower if ignore_case else (lambda word: word)
    skip = {normalize(word) for word in stopwords or ()}
    counts: dict[str, int] = {}
    for token in tokenize(text):
        word = normalize(token)
        if word not in skip:
            counts[word] = counts.get(word, 0) + 1
    return counts


def top_n(counts: Mapping[str, int], n: int) -> list[tuple[str, int]]:
    """The `n` most frequent (word, count) pairs; ties are broken alphabetically."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:n]


def frequencies(counts: Mapping[str, int]) -> dict[str, float]:
    """Each word's share of the total count (values sum to 1.0); {} if the total is 0."""
    total = sum(counts.values())
    if total == 0:
        return {}
    return {word: count / total for word, count in counts.items()}
