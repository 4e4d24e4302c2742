"""Count the words of a text."""
import re

_WORD = re.compile(r"[a-z0-9']+")


def count_words(text):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    counts = {}
    for word in _WORD.findall(text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return counts


def top_words(text, n):
    ranked = sorted(count_words(text).items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]
