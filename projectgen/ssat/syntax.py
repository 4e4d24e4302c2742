"""Python syntax read into SSAT-shaped plain data.

Shared by the models (a parameter a model wrote as text, `'key: str = None'`), by
`from_source` (signatures of real code) and by `render` (which module a file imports
as). Only the standard library: no SSAT model is needed to read syntax.
"""
from __future__ import annotations

import ast
import keyword
from typing import Any

from projectgen.repository.syntax import parse_python


def source_text(node: ast.AST | None) -> str | None:
    """Source text of an optional AST node."""
    return None if node is None else ast.unparse(node)


def parameters_from_ast(args: ast.arguments) -> list[dict[str, Any]]:
    """Parameter dicts (name, type, default, kind) in signature order."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [
        _param(a, d, "positional_only" if i < len(args.posonlyargs) else "positional")
        for i, (a, d) in enumerate(zip(positional, defaults))
    ]
    if args.vararg:
        out.append(_param(args.vararg, None, "var_positional"))
    out += [_param(a, d, "keyword_only") for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append(_param(args.kwarg, None, "var_keyword"))
    return out


def _param(arg: ast.arg, default: ast.expr | None, kind: str) -> dict[str, Any]:
    """One parameter dict."""
    return {
        "name": arg.arg,
        "type": source_text(arg.annotation),
        "default": source_text(default),
        "kind": kind,
    }


def parameter_from_text(text: str) -> dict[str, Any]:
    """Parse one parameter written as source ('key: str = None', '**kw')."""
    if text.strip() in ("*", "/"):
        raise ValueError(
            f"{text.strip()!r} is a marker, not a parameter; set kind='keyword_only' or "
            "'positional_only' on the parameters instead"
        )
    try:
        node = parse_python(f"def _f({text}): pass").body[0]
    except (SyntaxError, ValueError):
        node = None
    params = parameters_from_ast(node.args) if isinstance(node, ast.FunctionDef) else []
    if len(params) != 1:
        raise ValueError(f"{text!r} is not one parameter; write {{'name': ..., 'type': ..., 'default': ...}}")
    return params[0]


def module_name(path: str) -> str | None:
    """Dotted module for a repo .py path ('src/' layout stripped); None if not importable."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return None
    return ".".join(parts)
