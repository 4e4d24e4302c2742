"""The package layout's rules, checked on the source: no import cycles between modules or between
packages, no private names imported across modules, few modules at the top, and a public API that imports."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

import projectgen

PACKAGE_DIR = Path(projectgen.__file__).parent
# Code that projectgen ships as data (example tasks' references, files copied into the sandbox):
# it is not part of the package's import graph.
DATA_DIRS = (PACKAGE_DIR / "datasets" / "examples", PACKAGE_DIR / "evaluation" / "sandbox_files")


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if any(path.is_relative_to(data) for data in DATA_DIRS):
            continue
        parts = ["projectgen", *path.relative_to(PACKAGE_DIR).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def parsed_modules() -> dict[str, tuple[Path, ast.Module]]:
    """Every module of the package by dotted name, with its syntax tree: parsed once for all the rules below
    (parsing the package's ~400 modules is most of what they cost)."""
    return {module: (path, ast.parse(path.read_text(encoding="utf-8"))) for module, path in module_files().items()}


@pytest.fixture(scope="module")
def parsed() -> dict[str, tuple[Path, ast.Module]]:
    return parsed_modules()


@pytest.fixture(scope="module")
def full_graph(parsed: dict[str, tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """The import graph through every import, deferred ones included (four rules read it; none changes it)."""
    return import_graph(parsed, top_level_only=False)


@pytest.fixture(scope="module")
def import_time_graph(parsed: dict[str, tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """The import graph through the imports run at import time only (two rules read it)."""
    return import_graph(parsed, top_level_only=True)


def imported_names(module: str, path: Path, tree: ast.Module) -> Iterator[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import in a module, at any depth."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                yield source, alias.name, node.lineno


def lazy_tables(modules: dict[str, Path]) -> dict[str, dict[str, str]]:
    """Each lazy package's table (public name -> its module): importing a name through it loads that module."""
    return {package: importlib.import_module(package)._EXPORTS for package, path in modules.items()
            if path.name == "__init__.py" and "lazy_exports(" in path.read_text(encoding="utf-8")}


def resolve(source: str, name: str | None, modules: dict[str, Path],
            lazy: dict[str, dict[str, str]] | None = None) -> str | None:
    """The projectgen module an import loads: `from pkg import sub` loads pkg.sub when it is a module, and
    `from pkg import Name` the module that defines Name when pkg re-exports it lazily."""
    if name and f"{source}.{name}" in modules:
        return f"{source}.{name}"
    if name and lazy and name in lazy.get(source, {}):
        return lazy[source][name]
    return source if source in modules else None


def with_parents(module: str) -> list[str]:
    """Importing a.b.c runs a/__init__ and a/b/__init__ first: those are imports too."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts) + 1)]


def import_graph(parsed: dict[str, tuple[Path, ast.Module]], *, top_level_only: bool) -> dict[str, set[str]]:
    """Module -> the projectgen modules it imports (all imports, or only those run at import time)."""
    modules = {module: path for module, (path, _) in parsed.items()}
    lazy = lazy_tables(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, (path, tree) in parsed.items():
        allowed = None
        if top_level_only:
            # imports at module level (including inside `if`/`try` there), not inside functions or classes,
            # and not under `if TYPE_CHECKING:`
            allowed = set()
            stack = list(tree.body)
            while stack:
                node = stack.pop()
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    allowed.add(node.lineno)
                elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    stack.extend(node.orelse)
                elif isinstance(node, (ast.If, ast.Try)):
                    stack.extend([*node.body, *node.orelse, *getattr(node, "handlers", []),
                                  *getattr(node, "finalbody", [])])
                elif isinstance(node, ast.ExceptHandler):
                    stack.extend(node.body)
        for source, name, line in imported_names(module, path, tree):
            if allowed is not None and line not in allowed:
                continue
            target = resolve(source, name, modules, lazy)
            if target is None:
                continue
            # the module itself, and the packages it runs on the way that are not already loading
            # (a module's own parents are; but importing one of them by name is a real edge)
            graph[module].update(dependency for dependency in with_parents(target)
                                 if dependency != module and (dependency == target
                                                              or not module.startswith(dependency + ".")))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that ends where it starts, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_sees_through_a_lazy_package(import_time_graph: dict[str, set[str]]) -> None:
    """`from projectgen.llm import CallRecord` loads `llm.usage`: an edge the cycle tests must see."""
    assert {"projectgen.llm", "projectgen.llm.usage"} <= import_time_graph["projectgen.inspection.attempts"]


def test_find_cycle_reports_a_cycle_and_accepts_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_at_import_time(import_time_graph: dict[str, set[str]]) -> None:
    cycle = find_cycle(import_time_graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_even_through_deferred_imports(full_graph: dict[str, set[str]]) -> None:
    """Imports inside functions count too: a cycle there is a tangle of responsibilities, only hidden."""
    cycle = find_cycle(full_graph)
    assert cycle is None, "import cycle through a deferred import: " + " -> ".join(cycle)


def package_of(module: str) -> str:
    """The package a module belongs to, by its second name: projectgen.llm.door -> llm; a module at the
    top (projectgen.config) is a package of its own."""
    return module.split(".")[1] if "." in module else module


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package -> the other packages its modules import (the root, whose lazy table names every package
    as text, is left out: it imports none of them)."""
    packages: dict[str, set[str]] = {}
    for module, dependencies in graph.items():
        if module == "projectgen":
            continue
        packages.setdefault(package_of(module), set()).update(
            package_of(dependency) for dependency in dependencies if dependency != "projectgen")
    for package, dependencies in packages.items():
        dependencies.discard(package)
    return packages


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The nodes of each cycle of a graph: its strongly connected components of more than one node
    (Tarjan's algorithm), so every tangle is reported at once and whole."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# Package cycles known and being removed (none now): the test below fails on an entry that no longer applies.
KNOWN_PACKAGE_CYCLES: set[frozenset[str]] = set()


def test_cycles_finds_each_tangle_whole() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"a"}}
    assert cycles(graph) == {frozenset({"a", "b"}), frozenset({"c", "d"})}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == set()


def test_package_graph_joins_modules_by_package() -> None:
    graph = {"projectgen": {"projectgen.llm"}, "projectgen.llm": set(), "projectgen.llm.door": {"projectgen.errors"},
             "projectgen.ssat.validation": {"projectgen.llm.parsing", "projectgen.ssat"}, "projectgen.errors": set()}
    assert package_graph(graph) == {"llm": {"errors"}, "ssat": {"llm"}, "errors": set()}


def test_no_import_cycle_between_packages(full_graph: dict[str, set[str]]) -> None:
    """A package is a layer: two packages that import each other (through any module, at any depth,
    even deferred or for type checking only) are one tangle split in two folders."""
    found = cycles(package_graph(full_graph))
    new = sorted(sorted(cycle) for cycle in found - KNOWN_PACKAGE_CYCLES)
    assert not new, f"package import cycles: {new}"
    gone = sorted(sorted(cycle) for cycle in KNOWN_PACKAGE_CYCLES - found)
    assert not gone, f"these cycles are gone: delete them from KNOWN_PACKAGE_CYCLES: {gone}"


def private_uses(tree: ast.Module, modules: Iterable[str]) -> list[tuple[int, str]]:
    """(line, what) for each private name of another projectgen module that the module parsed as `tree` imports
    or reaches as ``module._name``."""
    modules = set(modules)
    found, bound = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("projectgen") and not node.level:
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__version__":
                    found.append((node.lineno, f"imports {node.module}.{alias.name}"))
                if f"{node.module}.{alias.name}" in modules:
                    bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            bound.update(alias.asname for alias in node.names if alias.asname and alias.name in modules)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in bound):
            found.append((node.lineno, f"uses {node.value.id}.{node.attr}"))
    return sorted(found)


def test_private_uses_finds_both_kinds() -> None:
    modules = {"projectgen.a", "projectgen.b"}
    source = ("from projectgen.a import _hidden, shown\nfrom projectgen import b\nimport projectgen.a as a\n"
              "b._inner()\na._other\nb.public()\n")
    assert private_uses(ast.parse(source), modules) == [
        (1, "imports projectgen.a._hidden"), (4, "uses b._inner"), (5, "uses a._other")]


def test_no_module_imports_a_private_name_of_another(parsed: dict[str, tuple[Path, ast.Module]]) -> None:
    offences = [f"{path.relative_to(PACKAGE_DIR.parent)}:{line} {what}"
                for path, tree in parsed.values()
                for line, what in private_uses(tree, parsed)]
    assert not offences, "\n".join(offences)


# Names still defined twice, each a known pair being removed: construction's own (its move into protocols/ renames
# them). The test below fails on an entry that no longer applies.
KNOWN_DOUBLE_NAMES: set[str] = set()
# standalone scripts run inside the sandbox, one per external system: each defines its own Settings and errors
STANDALONE_SCRIPTS = "projectgen.external.adapters."


def type_names(tree: ast.Module) -> list[str]:
    """The classes and type aliases a module defines at its top (CamelCase names; not TypeVars, not constants)."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not (
                isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") in ("TypeVar", "ParamSpec")):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [target.id for target in targets
                      if isinstance(target, ast.Name) and target.id[0].isupper() and not target.id.isupper()]
    return names


def test_type_names_finds_classes_and_aliases_only() -> None:
    source = ("class Unit:\n    pass\nStage = tuple[str, int]\nResult = TypeVar('Result')\nLIMIT = 3\n"
              "_Hidden = int\nScore: TypeAlias = float\n")
    assert type_names(ast.parse(source)) == ["Unit", "Stage", "Score"]


def test_each_class_and_type_alias_name_means_one_thing(parsed: dict[str, tuple[Path, ast.Module]]) -> None:
    """One name per idea: two classes or aliases of one name (a batch's `Unit` and a driven run's) make every reader
    and every import ask which is meant."""
    where: dict[str, list[str]] = {}
    for module, (_, tree) in parsed.items():
        if not module.startswith(STANDALONE_SCRIPTS):
            for name in type_names(tree):
                where.setdefault(name, []).append(module)
    doubles = {name: modules for name, modules in where.items() if len(modules) > 1}
    new = sorted(f"{name}: {', '.join(modules)}" for name, modules in doubles.items() if name not in KNOWN_DOUBLE_NAMES)
    assert not new, "names defined in more than one module:\n" + "\n".join(new)
    gone = sorted(KNOWN_DOUBLE_NAMES - set(doubles))
    assert not gone, f"these names are defined once now: delete them from KNOWN_DOUBLE_NAMES: {gone}"


def test_the_top_level_holds_at_most_eight_modules() -> None:
    top = sorted(p.name for p in PACKAGE_DIR.glob("*.py"))
    assert len(top) <= 8, top


def test_every_public_name_imports() -> None:
    for name in projectgen.__all__:
        assert getattr(projectgen, name) is not None, name


def test_importing_projectgen_loads_no_heavy_library() -> None:
    """`projectgen --help` stays fast: the CLI and the package import nothing heavy until a command needs it, the
    whole parser built (`evaluate` lists the protocols by their folders, importing none)."""
    code = ("import sys, projectgen, projectgen.cli; from projectgen.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'langchain', 'langchain_core', 'langgraph', 'chromadb', 'pydantic', 'rich', 'ray'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_only_packages_the_cli_parser_imports_from_are_lazy() -> None:
    """A lazy `__init__` (`lazy.py`) hides its edges from the cycle tests and leaves a first import to whichever
    thread asks first (concurrent first imports on workers once broke a resumed experiment): it is kept only where
    the CLI's parser imports one of the package's modules, so that an eager one would slow `projectgen --help`."""
    code = "import sys; from projectgen.cli.main import build_parser; build_parser(); print(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    lazy = [module for module, path in module_files().items()
            if path.name == "__init__.py" and "lazy_exports(" in path.read_text(encoding="utf-8")]
    assert "projectgen" in lazy
    needless = sorted(package for package in lazy if not any(name.startswith(package + ".") for name in loaded))
    assert not needless, f"lazy packages the CLI's parser never imports from (make their __init__ eager): {needless}"


def test_python_dash_m_projectgen_runs_the_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "projectgen", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and projectgen.__version__ in done.stdout, done.stdout + done.stderr


# The package that may import a protocol: the CLI (its commands). Every other package is shared machinery below the
# protocols (construction's judges reach reflection through the registry, from their own protocol folder).
IMPORTS_PROTOCOLS = {"cli"}
# the modules of projectgen.protocols that every protocol shares (the rest are the protocols' own folders)
SHARED_PROTOCOL_MODULES = {"projectgen.protocols", "projectgen.protocols.definition", "projectgen.protocols.names",
                           "projectgen.protocols.registry", "projectgen.protocols.evaluate",
                           "projectgen.protocols.samples"}


def protocol_of(module: str) -> str | None:
    """The protocol folder a module belongs to (projectgen.protocols.reflection.unit -> reflection), or None."""
    parts = module.split(".")
    if module in SHARED_PROTOCOL_MODULES or len(parts) < 3 or parts[1] != "protocols":
        return None
    return parts[2]


def test_protocol_of_tells_a_folder_from_the_shared_modules() -> None:
    assert protocol_of("projectgen.protocols.reflection.unit") == "reflection"
    assert protocol_of("projectgen.protocols.reflection") == "reflection"
    assert protocol_of("projectgen.protocols.evaluate") is None and protocol_of("projectgen.runs.unit") is None


def test_shared_machinery_imports_no_protocol(full_graph: dict[str, set[str]]) -> None:
    """The sandbox, the model door, the engine, the driver, memory, SSAT and the metrics stay below the protocols:
    only the CLI imports one (at any depth, deferred or for type checking too)."""
    packages = package_graph(full_graph)
    importers = sorted(package for package, dependencies in packages.items()
                       if "protocols" in dependencies and package not in IMPORTS_PROTOCOLS)
    assert not importers, f"packages below the protocols that import one: {importers}"


def test_a_protocol_folder_imports_no_other_protocol(full_graph: dict[str, set[str]]) -> None:
    """A protocol is one folder: it reaches another only through the shared modules (a new protocol touches only
    its own folder, and removing one breaks no other)."""
    crossings = sorted(f"{module} -> {dependency}"
                       for module, dependencies in full_graph.items()
                       for dependency in dependencies
                       if protocol_of(module) and protocol_of(dependency) not in (None, protocol_of(module)))
    assert not crossings, "\n".join(crossings)

