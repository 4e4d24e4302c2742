"""URL slugs from titles."""
from __future__ import annotations

import re
import unicodedata

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def _ascii(text: str) -> str:
    """`text` with accents dropped (é -> e); characters without an ASCII base become spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = [c if c.isascii() else ("" if unicodedata.combining(c) else " ") for c in decomposed]
    return "".join(kept)


def slugify(text: str, max_length: int | None = None) -> str:
    """The ASCII letters and digits of `text` in lower case (accents dropped), each run of anything else one
    hyphen; at most `max_length` characters, cut between words (a first word that is too long is cut)."""
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    words = [word for word in _SEPARATORS.split(_ascii(text).lower()) if word]
    slug = "-".join(words)
    if max_length is None or len(slug) <= max_length:
        return slug
    kept = ""
    for word in words:
        longer = f"{kept}-{word}" if kept else word
        if len(longer) > max_length:
            break
        kept = longer
    return kept or words[0][:max_length]
