"""Word helpers (the reference of the reference_target task shape)."""
from wordy.core import initials, longest

__all__ = ["initials", "longest"]
