from .index import build_index, search
from .words import words

__all__ = ["build_index", "search", "words"]
