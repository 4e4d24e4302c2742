"""Seed: find the notes mentioning every word of a query (written for projectgen's bundled seed set)."""


def find(notes, query):
    wanted = query.lower().split()
    return sorted(n for n, text in notes.items() if all(w in text.lower().split() for w in wanted))
