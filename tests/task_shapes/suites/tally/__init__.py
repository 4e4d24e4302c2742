"""Count hashable items."""
from tally.core import Tally

__all__ = ["Tally"]
