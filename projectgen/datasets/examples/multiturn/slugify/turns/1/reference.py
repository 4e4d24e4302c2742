"""URL slugs from titles."""


def slugify(text: str) -> str:
    """The words of `text` in lower case, joined with hyphens."""
    return "-".join(text.lower().split())
