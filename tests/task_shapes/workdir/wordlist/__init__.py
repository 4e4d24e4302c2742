"""Words from files."""
from pathlib import Path


def load(path: str | Path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").lower().split()


def longest(words: list[str]) -> str | None:
    best = None
    for word in words:
        if best is None or len(word) > len(best):
            best = word
    return best
