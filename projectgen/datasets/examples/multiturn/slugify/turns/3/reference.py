"""URL slugs from titles."""
import re
import unicodedata

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def _ascii(text: str) -> str:
    """`text` with accents dropped (é -> e); characters without an ASCII base become spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = [c if c.isascii() else ("" if unicodedata.combining(c) else " ") for c in decomposed]
    return "".join(kept)


def slugify(text: str) -> str:
    """The ASCII letters and digits of `text` in lower case (accents dropped), each run of anything else one
    hyphen."""
    return "-".join(word for word in _SEPARATORS.split(_ascii(text).lower()) if word)
