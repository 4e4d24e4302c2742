def longest(words):
    best = None
    for word in words:
        if best is None or len(word) > len(best):
            best = word
    return best


def initials(text):
    return "".join(word[0].upper() for word in text.split())
