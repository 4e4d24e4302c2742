"""URL slugs from titles."""
import re

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """The ASCII letters and digits of `text` in lower case, each run of anything else one hyphen."""
    return "-".join(word for word in _SEPARATORS.split(text.lower()) if word)
