"""Letter grades."""
from grades.core import average, letter

__all__ = ["average", "letter"]
