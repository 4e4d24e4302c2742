"""TOML text from plain data, for the task.toml files projectgen writes (an evolve run's evolved task).

The standard library only reads TOML (`tomllib`), and neither tomli-w nor tomlkit is a dependency, so
this is the small writer those files need, built from a dict rather than from concatenated lines: a
value is always quoted and escaped the same way, and whatever it writes `tomllib` reads back equal.
Strings are TOML basic strings made by `json.dumps` (JSON's escapes are TOML's; TOML also wants
U+007F escaped), keys are bare when they can be and quoted otherwise.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dumps(data: Mapping[str, Any]) -> str:
    """`data` as a TOML document: each table's plain values (strings, numbers, booleans, arrays) first,
    then one ``[table]`` per mapping value (``[a.b]`` below it). None values are left out: TOML has no
    null, and a key left out reads back as "not set"."""
    lines: list[str] = []
    _write_table(lines, (), data)
    return "\n".join(lines) + "\n"


def _write_table(lines: list[str], path: tuple[str, ...], data: Mapping[str, Any]) -> None:
    plain = {name: item for name, item in data.items() if item is not None and not isinstance(item, Mapping)}
    tables = {name: item for name, item in data.items() if isinstance(item, Mapping)}
    if path and (plain or not tables):  # a table holding only tables needs no header of its own
        if lines:
            lines.append("")
        lines.append(f"[{'.'.join(key(part) for part in path)}]")
    lines.extend(f"{key(name)} = {value(item)}" for name, item in plain.items())
    for name, table in tables.items():
        _write_table(lines, (*path, name), table)


def key(name: str) -> str:
    """A key as TOML writes it: bare (``install``) or quoted (``"a.b"``, ``"two words"``)."""
    if not isinstance(name, str):
        raise TypeError(f"a TOML key must be a string, not {type(name).__name__}")
    return name if BARE_KEY.match(name) else string(name)


def string(text: str) -> str:
    """A TOML basic string holding exactly `text`."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def value(item: Any) -> str:
    """An inline TOML value: a string, a boolean, a number, an array of values or an inline table."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if math.isnan(item):
            return "nan"
        if math.isinf(item):
            return "inf" if item > 0 else "-inf"
        return repr(item)
    if isinstance(item, str):
        return string(item)
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(element) for element in item) + "]"
    if isinstance(item, Mapping):
        pairs = ", ".join(f"{key(name)} = {value(element)}" for name, element in item.items())
        return f"{{ {pairs} }}" if pairs else "{}"
    raise TypeError(f"TOML has no value for {type(item).__name__}: {item!r}")
