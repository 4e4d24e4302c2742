"""JSON encoding and decoding of stored values, with strict type checks.

Storable values are: None, bool, int, str, finite float, list of storable
values, and dict with str keys and storable values (nested to any depth).
Tuples, sets, bytes and any other type are rejected.
"""
from __future__ import annotations

import json
import math
from typing import Any

from .errors import SerializationError


def validate_value(value: Any, path: str = "value") -> None:
    """Raise SerializationError if `value` (or anything nested in it) is not storable."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SerializationError(f"{path}: non-finite float {value!r} cannot be stored")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            validate_value(item, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise SerializationError(f"{path}: dict keys must be str, not {type(key).__name__}")
            validate_value(item, f"{path}[{key!r}]")
        return
    raise SerializationError(f"{path}: values of type {type(value).__name__} cannot be stored")


def encode(value: Any, *, indent: int | None = None) -> str:
    """Validate `value` and return its JSON text (dict keys sorted, non-ASCII kept)."""
    validate_value(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False, indent=indent)


def _reject_constant(name: str) -> Any:
    raise SerializationError(f"invalid JSON: {name} is not allowed")


def decode(text: str) -> Any:
    """Parse JSON text; raise SerializationError if it is not valid JSON (NaN/Infinity included)."""
    if not isinstance(text, str):
        raise SerializationError(f"expected JSON text, got {type(text).__name__}")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SerializationError(f"invalid JSON: {exc}") from exc


def clone(value: Any) -> Any:
    """An independent deep copy of a storable value (made by encoding and decoding it)."""
    return decode(encode(value))
