"""An inverted index: word -> the documents holding it."""


def build_index(documents):
    pass


def search(index, query):
    pass
