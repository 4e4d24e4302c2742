"""Timestamps as aware UTC datetimes, so trace events and model calls can be compared.

Trace events carry ISO strings (``t``), call records carry datetimes; either may be
naive (taken as UTC).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def as_utc(moment: datetime) -> datetime:
    """A timestamp as an aware UTC datetime (naive ones are taken as UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def parse_time(text: Any) -> datetime | None:
    """An ISO timestamp (``Z`` allowed) as an aware UTC datetime; None when `text` is not one."""
    if not isinstance(text, str):
        return None
    try:
        return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None
