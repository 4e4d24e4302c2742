"""An inverted index: word -> the documents holding it."""
from .words import words


def build_index(documents):
    index = {}
    for doc_id, text in documents.items():
        for word in set(words(text)):
            index.setdefault(word, set()).add(doc_id)
    return {word: sorted(ids) for word, ids in index.items()}


def search(index, query):
    wanted = words(query)
    if not wanted:
        return []
    found = set(index.get(wanted[0], []))
    for word in wanted[1:]:
        found &= set(index.get(word, []))
    return sorted(found)
