"""Splitting a text into words."""
import re

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def words(text):
    return [word.lower() for word in _WORD.findall(text)]
