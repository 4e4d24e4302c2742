from .entries import Entry, parse_entry
from .ledger import Ledger, format_cents

__all__ = ["Entry", "Ledger", "format_cents", "parse_entry"]
