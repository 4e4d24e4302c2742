"""An SSAT derived from existing Python source (reference repositories, generated skeletons).

Used to compare a generated skeleton with its architecture and to give later stages
the architecture of code that already exists. Never fatal on odd source: files that
do not parse are skipped (`unparsable_files` lists them) and items the SSAT cannot
hold faithfully are simplified until they validate.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from projectgen.repository import safe_relpath
from projectgen.repository.syntax import parse_python
from projectgen.ssat.models import SSAT, Attribute, ClassNode, FunctionNode, GlobalCode, redefinition_allowed
from projectgen.ssat.syntax import module_name, parameters_from_ast, source_text


def _parse(path: str, text: str) -> ast.Module | None:
    """The module's AST, or None when it does not parse."""
    try:
        return parse_python(text, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def unparsable_files(repo: Mapping[str, str]) -> list[str]:
    """The .py files `ssat_from_repository` skips because they do not parse."""
    return sorted(p for p, text in repo.items() if p.endswith(".py") and _parse(p, text) is None)


def ssat_from_repository(repo: Mapping[str, str], project_name: str, description: str = "") -> SSAT:
    """Derive an SSAT from existing Python source (the .py files of `repo`).

    Files that do not parse are left out (`unparsable_files` lists them); items the
    SSAT cannot express faithfully are simplified, never fatal: nested classes and
    functions are omitted, a name defined twice keeps its first definition.
    """
    parsed = {safe_relpath(p): _parse(p, text) for p, text in sorted(repo.items()) if p.endswith(".py")}
    trees = {path: tree for path, tree in parsed.items() if tree is not None}
    modules: dict[str, str] = {}
    for path in trees:
        name = module_name(path)
        if name and name not in modules:
            modules[name] = path
    files = [_file_from_ast(path, tree, modules) for path, tree in trees.items()]
    packages = [
        {"path": f["path"].rsplit("/", 1)[0], "description": f["description"]}
        for f in files
        if f["path"].endswith("/__init__.py")
    ]
    return SSAT.model_validate(
        {"project_name": project_name, "description": description, "modules": packages, "files": files}
    )


def _docstring_first_line(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """First non-empty docstring line."""
    doc = ast.get_docstring(node) or ""  # type: ignore[arg-type]
    return next((line.strip() for line in doc.splitlines() if line.strip()), "")


def _validated(model: type[BaseModel], data: dict[str, Any],
               fallback: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """Validate; on failure retry a simplified version; None if that fails too."""
    for candidate in (data, fallback(data)):
        try:
            return model.model_validate(candidate)
        except ValidationError:
            continue
    return None


def _bare_function(data: dict[str, Any]) -> dict[str, Any]:
    """A function without annotations, defaults, decorators (for source the SSAT cannot hold)."""
    params = [{"name": p["name"], "kind": p["kind"]} for p in data["parameters"]]
    return {**data, "parameters": params, "returns": None, "decorators": []}


def _function_from_ast(node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionNode | None:
    """A FunctionNode for a def, simplified if its source text does not validate."""
    data = {
        "name": node.name,
        "description": _docstring_first_line(node),
        "parameters": parameters_from_ast(node.args),
        "returns": source_text(node.returns),
        "is_async": isinstance(node, ast.AsyncFunctionDef),
        "decorators": [ast.unparse(d) for d in node.decorator_list],
    }
    return _validated(FunctionNode, data, _bare_function)


def _assigned(stmt: ast.stmt) -> list[tuple[str, str | None, str | None]]:
    """(name, type, value) for simple assignments; `a, b = 1, 2` is split, `a, b = f()` gets no value."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [(stmt.target.id, source_text(stmt.annotation), source_text(stmt.value))]
    if isinstance(stmt, ast.Assign):
        out: list[tuple[str, str | None, str | None]] = []
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                out.append((target.id, None, source_text(stmt.value)))
            elif isinstance(target, (ast.Tuple, ast.List)):
                values = stmt.value.elts if isinstance(stmt.value, (ast.Tuple, ast.List)) else []
                if len(values) != len(target.elts):
                    values = [None] * len(target.elts)
                out += [(e.id, None, source_text(v)) for e, v in zip(target.elts, values) if isinstance(e, ast.Name)]
        return out
    type_alias = getattr(ast, "TypeAlias", None)  # `type X = ...` (Python 3.12+)
    if type_alias and isinstance(stmt, type_alias):
        return [(stmt.name.id, "TypeAlias", source_text(stmt.value))]
    return []


def _flatten(stmts: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements, looking into if/try blocks (not `if __name__ == '__main__'`)."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            if "__name__" in ast.unparse(stmt.test) and "__main__" in ast.unparse(stmt.test):
                continue
            yield from _flatten(stmt.body)
            yield from _flatten(stmt.orelse)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _flatten(stmt.body)
            for handler in stmt.handlers:
                yield from _flatten(handler.body)
            yield from _flatten(stmt.orelse)
            yield from _flatten(stmt.finalbody)
        else:
            yield stmt


def _class_from_ast(node: ast.ClassDef) -> ClassNode | None:
    """A ClassNode from a class body: simple assignments and direct methods."""
    methods = _first_definitions(
        _function_from_ast(s) for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    taken = {m.name for m in methods}
    attributes: list[dict[str, Any]] = []
    for stmt in node.body:
        for name, type_, value in _assigned(stmt):
            if name not in taken:
                attributes.append({"name": name, "type": type_, "value": value})
                taken.add(name)
    bases = [ast.unparse(b) for b in node.bases]
    bases += [f"{k.arg}={ast.unparse(k.value)}" if k.arg else f"**{ast.unparse(k.value)}" for k in node.keywords]
    data = {
        "name": node.name,
        "bases": bases,
        "description": _docstring_first_line(node),
        "decorators": [ast.unparse(d) for d in node.decorator_list],
        "attributes": [a for a in attributes if _validated(Attribute, a, lambda d: {"name": d["name"]})],
        "methods": methods,
    }
    return _validated(ClassNode, data, lambda d: {**d, "bases": [], "decorators": []})


def _first_definitions(items: Iterator[ClassNode | FunctionNode | None]) -> list[ClassNode | FunctionNode]:
    """Drop redefinitions (first wins), keeping overload variants and property setters."""
    kept: list[ClassNode | FunctionNode] = []
    defined: set[str] = set()
    for item in items:
        if item is None:
            continue
        if isinstance(item, FunctionNode) and redefinition_allowed(item):
            kept.append(item)
        elif item.name not in defined:
            kept.append(item)
            defined.add(item.name)
    return kept


def _import_targets(node: ast.Import | ast.ImportFrom, package: list[str]) -> list[list[str]]:
    """Candidate module names (most specific first) for each name an import brings in."""
    if isinstance(node, ast.Import):
        return [[".".join(a.name.split(".")[:i]) for i in range(a.name.count(".") + 1, 0, -1)] for a in node.names]
    base = _absolute_module(node, package)
    if base is None:
        return []
    return [[f"{base}.{a.name}" if base else a.name, base] for a in node.names]


def _absolute_module(node: ast.ImportFrom, package: list[str]) -> str | None:
    """The absolute module of a (possibly relative) from-import; None if it escapes."""
    if not node.level:
        return node.module
    if node.level - 1 > len(package):
        return None
    parts = package[: len(package) - (node.level - 1)] + ([node.module] if node.module else [])
    return ".".join(parts)


def _file_from_ast(path: str, tree: ast.Module, modules: Mapping[str, str]) -> dict[str, Any]:
    """File dict: intra-repo imports become dependencies, top-level imports stay as lines."""
    parts = path[:-3].split("/")
    parts = parts[1:] if parts[0] == "src" and len(parts) > 1 else parts
    package = parts[:-1]
    statements = list(_flatten(tree.body))
    items = _first_definitions(
        _class_from_ast(s) if isinstance(s, ast.ClassDef) else _function_from_ast(s)
        for s in statements
        if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    )
    return {
        "path": path,
        "description": _docstring_first_line(tree),
        "dependencies": _repo_dependencies(path, tree, package, modules),
        "imports": _import_lines(tree, package),
        "globals": _globals_from_ast(statements, {i.name for i in items}),
        "classes": [i for i in items if isinstance(i, ClassNode)],
        "functions": [i for i in items if isinstance(i, FunctionNode)],
    }


def _repo_dependencies(path: str, tree: ast.Module, package: list[str], modules: Mapping[str, str]) -> list[str]:
    """Repo files any import in the file (nested ones too) refers to, itself excluded."""
    found = {
        next((modules[c] for c in candidates if c in modules), None)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for candidates in _import_targets(node, package)
    }
    return sorted(found - {None, path})


def _import_lines(tree: ast.Module, package: list[str]) -> list[str]:
    """Top-level import statements made absolute; `__future__` imports left to the stub."""
    imports = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            module = _absolute_module(node, package)
            if not module:
                continue
            node = ast.ImportFrom(module=module, names=node.names, level=0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.unparse(node))
    return imports


def _globals_from_ast(statements: Sequence[ast.stmt], defined: set[str]) -> list[GlobalCode]:
    """Module-level assignments to names not `defined` as class or function (first one wins)."""
    taken = set(defined)
    globals_: list[GlobalCode] = []
    for stmt in statements:
        for name, type_, value in _assigned(stmt):
            if name in taken:
                continue
            kind = "type_alias" if type_ and type_.split(".")[-1] == "TypeAlias" else (
                "constant" if name.strip("_").isupper() else "variable"
            )
            item = _validated(GlobalCode, {"name": name, "kind": kind, "type": type_, "value": value},
                              lambda d: {"name": d["name"], "kind": d["kind"]})
            if item:
                globals_.append(item)
                taken.add(name)
    return globals_
