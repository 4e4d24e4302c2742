"""What changed between two SSATs: structured (DeepDiff JSON) and as short prompt lines.

The architecture and skeleton stages show a model how its revision differs from the
last one; the run trace records the same diff. Items are keyed by path and name and
shown with the signatures `render` uses, so changes read like the prompts.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from projectgen.ssat.models import SSAT, Attribute, ClassNode, FileNode, FunctionNode, GlobalCode, method_receiver
from projectgen.ssat.render import class_header, signature


def _keyed(items: Sequence[Any], view: Callable[[Any], Any]) -> dict[str, Any]:
    """Named items as a dict; a reused name (overload, setter) gets '#2', '#3'."""
    out: dict[str, Any] = {}
    for item in items:
        key, n = item.name, 1
        while key in out:
            n += 1
            key = f"{item.name}#{n}"
        out[key] = view(item)
    return out


def _diff_view(ssat: SSAT) -> dict[str, Any]:
    """The SSAT as nested dicts keyed by path/name, so diffs name what changed."""

    def typed(item: GlobalCode | Attribute) -> dict[str, str]:
        # "" rather than None, so a type appearing reads as a value change, not a type change
        return {"type": item.type or "", "value": item.value or ""}

    def function(fn: FunctionNode, receiver: str | None = None) -> dict[str, Any]:
        return {"signature": signature(fn, receiver), "description": fn.description,
                "parameters": {p.name: p.description for p in fn.parameters if p.description}}

    def cls(c: ClassNode) -> dict[str, Any]:
        return {
            "signature": " ".join([*(f"@{d}" for d in c.decorators), class_header(c)]),
            "description": c.description,
            "attributes": _keyed(c.attributes, lambda a: {**a.model_dump(exclude={"name"}), **typed(a)}),
            "methods": _keyed(c.methods, lambda m: function(m, method_receiver(m))),
        }

    def file(f: FileNode) -> dict[str, Any]:
        return {
            "description": f.description,
            "dependencies": set(f.dependencies),
            "imports": set(f.imports),
            "globals": _keyed(f.globals, lambda g: {**g.model_dump(exclude={"name"}), **typed(g)}),
            "classes": _keyed(f.classes, cls),
            "functions": _keyed(f.functions, function),
        }

    return {
        "project_name": ssat.project_name,
        "description": ssat.description,
        "modules": {m.key: {"description": m.description, "members": set(m.files)} for m in ssat.modules},
        "files": {f.path: file(f) for f in ssat.files()},
    }


def diff_ssat(old: SSAT, new: SSAT) -> dict[str, Any]:
    """DeepDiff of two SSATs as plain JSON data, with paths like
    root['files']['kvstore/store.py']['classes']['KVStore']['methods']['get']['signature'].
    """
    from deepdiff import DeepDiff

    raw = json.loads(DeepDiff(_diff_view(old), _diff_view(new)).to_json())
    return {kind: sorted(value) if isinstance(value, list) else value for kind, value in sorted(raw.items())}


_ADDED = ("dictionary_item_added", "set_item_added", "iterable_item_added")
_REMOVED = ("dictionary_item_removed", "set_item_removed", "iterable_item_removed")
_CHANGED = ("values_changed", "type_changes")
_CONTAINER_KINDS = MappingProxyType(
    {
        "files": "file",
        "modules": "package",
        "classes": "class",
        "functions": "function",
        "methods": "method",
        "globals": "global",
        "attributes": "attribute",
        "dependencies": "dependency",
        "imports": "import",
        "members": "file",
    }
)


def _describe(path: str) -> str:
    """'method kvstore/store.py: KVStore.get' from a DeepDiff path."""
    from deepdiff import parse_path

    elements = parse_path(path)
    file, names, kind, fields = "", [], "", []
    i = 0
    while i < len(elements):
        key = elements[i]
        if key in _CONTAINER_KINDS and i + 1 < len(elements):
            kind, value = _CONTAINER_KINDS[key], str(elements[i + 1])
            if key in ("files", "modules"):
                file = value
            elif key in ("dependencies", "imports", "members"):
                return f"{kind} of {file}: {value}"
            else:
                names.append(value)
            fields = []
            i += 2
        else:
            fields.append(str(key))
            i += 1
    where = ": ".join(p for p in (file, ".".join(names)) if p) or "project"
    return f"{where} {' '.join(fields)}" if fields else f"{kind} {where}".strip()


def _change(old: Any, new: Any, limit: int = 60) -> str:
    """'old -> new', long strings cut to the part that differs."""
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > limit:
        start = 0
        while start < min(len(old), len(new)) and old[start] == new[start]:
            start += 1
        end = 0
        while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
            end += 1
        start, end = max(start - 12, 0), max(end - 12, 0)
        old, new = (
            ("..." if start else "") + s[start : len(s) - end] + ("..." if end else "") for s in (old, new)
        )
    return f"{_cut(old, limit)} -> {_cut(new, limit)}"


def _cut(value: Any, limit: int) -> str:
    """repr() cut to a prompt-friendly length."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_diff(diff: Mapping[str, Any], max_lines: int = 30) -> str:
    """Added (+), removed (-) and changed (~) items, one per line, at most `max_lines`."""
    lines: list[str] = []
    for sign, kinds in (("+", _ADDED), ("-", _REMOVED)):
        lines += sorted(f"{sign} {_describe(p)}" for kind in kinds for p in diff.get(kind, ()))
    changed = []
    for kind in _CHANGED:
        for path, change in diff.get(kind, {}).items():
            changed.append(f"~ {_describe(path)}: {_change(change.get('old_value'), change.get('new_value'))}")
    lines += sorted(changed)
    if not lines:
        return "no changes"
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + [f"... and {len(lines) - max_lines + 1} more changes"]
    return "\n".join(lines)
