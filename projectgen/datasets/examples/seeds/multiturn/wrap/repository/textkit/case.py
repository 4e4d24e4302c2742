"""Case changes."""


def title_case(text: str) -> str:
    """Each word of `text` with its first letter in upper case."""
    return " ".join(word[:1].upper() + word[1:] for word in text.split())
