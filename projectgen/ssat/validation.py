"""Checking architect output: JSON text in, a valid SSAT or every problem in plain words out.

The messages go back to the model as feedback, so each names where the problem is
twice: the location path (`files[2].classes[0].name`) and the human names along it
(`kvstore/store.py: KVStore.get`).
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ValidationError

from projectgen.errors import ProjectGenError
from projectgen.ssat.models import SSAT, Attribute, ClassNode, FileNode, FunctionNode, GlobalCode, ModuleNode, Parameter

# Which model a list under a key holds (for 'allowed fields' hints).
_LIST_ITEM_MODELS: Mapping[str, type[BaseModel]] = MappingProxyType(
    {
        "files": FileNode,
        "modules": ModuleNode,
        "classes": ClassNode,
        "functions": FunctionNode,
        "methods": FunctionNode,
        "parameters": Parameter,
        "params": Parameter,
        "globals": GlobalCode,
        "attributes": Attribute,
    }
)


class SSATValidationError(ProjectGenError):
    """An SSAT the model wrote is invalid; the message lists every problem, one per line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid SSAT:\n" + "\n".join(f"- {p}" for p in problems))


def validate_ssat_json(data: str | bytes | Mapping[str, Any] | list[Any] | SSAT,
                       project_name: str | None = None) -> SSAT:
    """Parse and validate model output; raise SSATValidationError with readable problems.

    The paper's SSAT is a bare list of modules: it loads with ``project_name`` naming the
    project (a tree that names its own keeps it).

    Text may be fenced or wrapped in prose (see `projectgen.llm.parsing.find_json`). JSON
    that had to be repaired because it was cut off is rejected even if it validates:
    a truncated file list would silently drop part of the architecture.
    """
    if isinstance(data, SSAT):
        return data
    problems: list[str] = []
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    if isinstance(data, str):
        from projectgen.llm.parsing import StructuredOutputError, find_json

        try:
            found = find_json(data)
        except StructuredOutputError as exc:
            raise SSATValidationError([str(exc)]) from None
        data = found.value
        if found.truncated:
            problems.append("the JSON is cut off before its end; send the complete SSAT (shorter descriptions)")
    if isinstance(data, list) and project_name:
        data = {"project_name": project_name, "modules": data}
    elif isinstance(data, Mapping) and project_name and not data.get("project_name"):
        data = {**data, "project_name": project_name}
    if not isinstance(data, Mapping):
        shown = "a list of modules without a project name" if isinstance(data, list) else type(data).__name__
        raise SSATValidationError([*problems, f"the SSAT must be a JSON object, got {shown}"])
    try:
        ssat = SSAT.model_validate(data)
    except ValidationError as exc:
        problems += _format_errors(exc, data)
    if problems:
        raise SSATValidationError(problems)
    return ssat


def _format_errors(exc: ValidationError, data: Mapping[str, Any]) -> list[str]:
    """Pydantic errors as 'files[2].classes[0].name (a.py: Foo): problem' lines."""
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "SSAT"
        context = _context(data, loc)
        message = _error_message(error, loc)
        for part in message.splitlines() or [""]:
            lines.append(f"{where}{f' ({context})' if context else ''}: {part}")
    return lines


def _error_message(error: Mapping[str, Any], loc: tuple[Any, ...]) -> str:
    """One pydantic error in plain words."""
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        model: type[BaseModel] | None = SSAT
        for part in loc[:-1]:
            if isinstance(part, str):
                model = _LIST_ITEM_MODELS.get(part) or model
        allowed = ", ".join((f.alias or name) for name, f in model.model_fields.items()) if model else ""
        return f"unknown field {loc[-1]!r} (allowed: {allowed})"
    if kind == "missing":
        return "missing required field"
    message = message.removeprefix("Value error, ")
    value = error.get("input")
    if kind != "value_error" and isinstance(value, (str, int, float, bool)) and len(repr(value)) <= 60:
        message += f" (got {value!r})"
    return message


def _context(data: Any, loc: tuple[Any, ...]) -> str:
    """Human names along an error location: 'kvstore/store.py: KVStore.get(key)'."""
    path, names, node, key = "", "", data, ""
    for part in loc:
        if isinstance(part, str) and isinstance(node, Mapping):
            key, node = part, node.get(part)
        elif isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
            label = node.get("path") or node.get("name") if isinstance(node, Mapping) else None
            if not isinstance(label, str):
                continue
            if key in ("files", "modules"):
                path = label
            elif key in ("parameters", "params"):
                names += f"({label})"
            else:
                names += f".{label}" if names else label
        else:
            break
    return ": ".join(p for p in (path, names) if p)
