"""Split a text into lowercase words."""
import re

WORD = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    return [w.strip("'") for w in WORD.findall(text.lower()) if w.strip("'")]
