"""Words wrapped into lines."""
from __future__ import annotations


def _pieces(word: str, width: int) -> list[str]:
    """`word` cut into pieces of `width` characters, the last one shorter."""
    return [word[start:start + width] for start in range(0, len(word), width)]


def wrap_words(text: str, width: int) -> list[str]:
    """The words of `text` packed greedily into lines of at most `width` characters; a longer word is cut into
    pieces of `width` characters. A `width` below 1 raises ValueError."""
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines: list[str] = []
    line = ""
    for word in text.split():
        for piece in _pieces(word, width):
            if line and len(line) + 1 + len(piece) <= width:
                line += " " + piece
            else:
                if line:
                    lines.append(line)
                line = piece
    if line:
        lines.append(line)
    return lines
