"""Run-length encoding."""


def encode(text: str) -> str:
    """Each run of one character as the character and the run's length (a run of 1: the character alone)."""
    if any(char.isdigit() for char in text):
        raise ValueError("a text holding digits cannot be run-length encoded")
    parts = []
    index = 0
    while index < len(text):
        char = text[index]
        end = index
        while end < len(text) and text[end] == char:
            end += 1
        count = end - index
        parts.append(char if count == 1 else f"{char}{count}")
        index = end
    return "".join(parts)
