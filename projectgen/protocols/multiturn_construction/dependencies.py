"""DevEval's dependency kinds of a repository-level seed's target function, which SR-Eval's seed filter reads: it
keeps a function with intra-file dependencies (another top-level name of its own file) and drops a self-contained
one and one with cross-file dependencies (a name from another module of the repository).

Read statically and per function, as DevEval's dependency lists are: Python's own scoping (`symtable`) says which
names the function takes from its module (a parameter or a local named like a top-level name is the function's),
and the file's imports say where an imported one comes from. A name reached through `getattr` or `importlib` is not
seen.
"""
from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator

from projectgen.protocols.multiturn_construction.seeds import TaskSeed, target_function
from projectgen.repository.syntax import parse_python

INTRA_FILE, CROSS_FILE, SELF_CONTAINED = "intra-file", "cross-file", "self-contained"


def dependencies(seed: TaskSeed) -> list[str]:
    """What the target function uses of the code around it, one line each: ``intra-file: F uses NAME`` for each
    other top-level name of its file, ``cross-file: F uses NAME from MODULE`` for each name it takes from an import of
    the repository's own modules (or a relative one), ``cross-file: F imports MODULE`` for such an import inside it,
    and ``cross-file: FILE imports * from MODULE`` (which names a star import brings cannot be told)."""
    code = seed.reference()
    node = target_function(code, seed.function)
    if node is None:
        return [f"{seed.target} defines no function {seed.function!r}"]
    packages = {path.split("/")[0].removesuffix(".py") for path in seed.snapshot()}

    def in_repository(module: str) -> bool:
        return module.startswith(".") or module.split(".")[0] in packages

    used = module_names_used(code, node)
    bound = [pair for statement in _module_scope_imports(parse_python(code)) for pair in _bound_by(statement)]
    imported = {name: module for name, module in bound if name != "*"}
    found = [f"{INTRA_FILE}: {seed.function} uses {name}" for name in sorted(used & file_bindings(code, node.name))]
    found += [f"{CROSS_FILE}: {seed.function} uses {name} from {imported[name]}" for name in sorted(used)
              if name in imported and in_repository(imported[name])]
    found += [f"{CROSS_FILE}: {seed.function} imports {module}" for statement in ast.walk(node)
              if isinstance(statement, (ast.Import, ast.ImportFrom))
              for module in sorted({module for _, module in _bound_by(statement)}) if in_repository(module)]
    found += [f"{CROSS_FILE}: {seed.target} imports * from {module}" for name, module in bound
              if name == "*" and in_repository(module)]
    return found


def dependency_reason(seed: TaskSeed, found: list[str]) -> str:
    """Why SR-Eval's dependency filter drops a repository-level seed ("" when kept), from its `dependencies`: it
    keeps a target function with intra-file dependencies only. A cross-file one drops it, and so does none at all
    (a self-contained function is function-level material, not a repository-level task)."""
    cross = [line for line in found if not line.startswith(INTRA_FILE)]
    if cross:
        return "; ".join(cross)
    if not found:
        return (f"{SELF_CONTAINED}: {seed.function} uses no other top-level name of {seed.target} "
                "(function-level material, not a repository-level task)")
    return ""


def module_names_used(code: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The module-level (global) names the function `node` of `code` reads or sets, in its nested scopes too."""
    module = symtable.symtable(code, "<seed>", "exec")
    scope = next(child for child in module.get_children() if child.get_type() == "function"
                 and (child.get_name(), child.get_lineno()) == (node.name, node.lineno))
    return _global_names(scope)


def file_bindings(code: str, function: str) -> set[str]:
    """The names `code` binds at top level other than by an import and other than `function` itself: its functions,
    classes and constants (a tuple assignment, a loop, a definition inside an `if` included)."""
    module = symtable.symtable(code, "<seed>", "exec")
    return {symbol.get_name() for symbol in module.get_symbols()
            if (symbol.is_assigned() or symbol.is_namespace()) and not symbol.is_imported()} - {function}


def _global_names(scope: symtable.SymbolTable) -> set[str]:
    names = {symbol.get_name() for symbol in scope.get_symbols()
             if symbol.is_global() and (symbol.is_referenced() or symbol.is_assigned())}
    for child in scope.get_children():
        names |= _global_names(child)
    return names


def _module_scope_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that bind module-level names: at top level or inside an `if`, `try`, `with` there, not inside a
    function or class."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield from _module_scope_imports(child)


def _bound_by(statement: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str]]:
    """(name bound, module it comes from) for each name of an import; a relative module keeps its dots, a star
    import binds "*"."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            yield alias.asname or alias.name.split(".")[0], alias.name
        return
    module = "." * statement.level + (statement.module or "")
    for alias in statement.names:
        yield alias.asname or alias.name, module
