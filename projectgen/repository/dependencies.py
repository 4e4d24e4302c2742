"""Which repository files import which, and the order to fill them in.

The coder stage fills files layer by layer: a file is written after the files it
imports, so the model sees their real code rather than skeleton stubs. Files in one
layer do not depend on each other and can be filled in parallel (LangGraph fan-out).

Cycle policy: import cycles are condensed as strongly connected components (Tarjan), and
*every member of a cycle lands in the same layer*, listed by path. No edge is dropped,
so nothing is placed before a file it imports unless the two import each other, in which
case neither can come first and the skeleton's signatures are what each sees of the
other. The result depends only on the graph, never on dict or set order.
"""
from __future__ import annotations

import ast
import posixpath
import warnings
from collections.abc import Iterable, Iterator, Mapping

from projectgen.repository.syntax import parse_python

# What ast.parse raises for source it cannot read.
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def _module_file(files: set[str], parts: Iterable[str]) -> str | None:
    """The file defining dotted module `parts`: ``a/b.py`` or the package's ``a/b/__init__.py``."""
    stem = "/".join(p for p in parts if p)
    if not stem:
        return None
    for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
        if candidate in files:
            return candidate
    return None


def _longest_prefix(files: set[str], base: tuple[str, ...], dotted: list[str]) -> str | None:
    """The file of the longest importable prefix of `dotted` below `base`."""
    for k in range(len(dotted), 0, -1):
        found = _module_file(files, (*base, *dotted[:k]))
        if found:
            return found
    return None


def _search_roots(path: str, files: set[str]) -> list[tuple[str, ...]]:
    """Folders absolute imports of `path` are resolved from, in order.

    First the nearest ancestor folder that is not a package (what pytest's default
    "prepend" import mode and ``python script.py`` put on sys.path), then the repository
    root, then ``src/`` for the src layout.
    """
    folder = posixpath.dirname(path)
    while folder and f"{folder}/__init__.py" in files:
        folder = posixpath.dirname(folder)
    roots: list[tuple[str, ...]] = []
    for root in (folder, "", "src"):
        parts = tuple(root.split("/")) if root else ()
        if parts not in roots:
            roots.append(parts)
    return roots


def _imports(tree: ast.AST) -> Iterator[tuple[int, list[str], list[str]]]:
    """(level, module parts, imported names) for every import statement, nested ones too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield 0, alias.name.split("."), []
        elif isinstance(node, ast.ImportFrom):
            module = node.module.split(".") if node.module else []
            yield node.level, module, [a.name for a in node.names if a.name != "*"]


def _resolve(path: str, level: int, module: list[str], names: list[str], files: set[str]) -> set[str]:
    """Repository files one import statement of `path` refers to.

    ``from a.b import c`` means module ``a/b/c.py`` when it exists, else a name defined
    in ``a/b.py`` or ``a/b/__init__.py``; only the most specific file counts (parent
    ``__init__.py`` files are not added), which keeps re-exporting packages from turning
    every submodule import into a cycle.
    """
    if level:
        folder = tuple(p for p in posixpath.dirname(path).split("/") if p)
        if level - 1 > len(folder):
            return set()  # climbs above the repository root
        bases = [folder[: len(folder) - (level - 1)]]
    else:
        bases = _search_roots(path, files)
    for base in bases:
        found = set()
        for name in names:
            sub = _module_file(files, (*base, *module, name))
            if sub:
                found.add(sub)
            elif module or level:
                target = _module_file(files, (*base, *module))
                if target:
                    found.add(target)
        if not names or not found:
            target = _longest_prefix(files, base, module) if module else None
            if target:
                found.add(target)
        if found:
            return found
    return set()


def import_graph(repo: Mapping[str, str]) -> dict[str, set[str]]:
    """For every ``.py`` file, the other repository files it imports.

    Standard-library and third-party imports resolve to no file and are ignored; a file
    that does not parse gets no edges (it is still a node).
    """
    files = {p for p in repo if p.endswith(".py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(files):
        deps: set[str] = set()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. invalid escapes in generated code
                tree = parse_python(repo[path], path)
        except _PARSE_ERRORS:
            tree = None
        if tree is not None:
            for level, module, names in _imports(tree):
                deps |= _resolve(path, level, module, names, files)
        deps.discard(path)
        graph[path] = deps
    return graph


def _strongly_connected(nodes: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's SCCs, iteratively; each component comes after every component it reaches."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            node, pending = work[-1]
            for nxt in pending:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _normalized(graph: Mapping[str, Iterable[str]]) -> tuple[list[str], dict[str, list[str]]]:
    """Sorted nodes and sorted edges; edges to files that are not keys, and self-edges, dropped."""
    nodes = sorted(graph)
    edges = {n: sorted({d for d in graph[n] if d in graph and d != n}) for n in nodes}
    return nodes, edges


def dependency_layers(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Files grouped so that each layer depends only on earlier layers (or its own cycle).

    Layer 0 holds files importing nothing in the graph; a file's layer is one more than
    the highest layer among its dependencies. Members of an import cycle share a layer.
    Every key appears exactly once; dependencies that are not keys are ignored.
    """
    nodes, edges = _normalized(graph)
    component_of: dict[str, int] = {}
    depth: list[int] = []
    for number, component in enumerate(_strongly_connected(nodes, edges)):
        for member in component:
            component_of[member] = number
        below = {component_of[d] for m in component for d in edges[m]} - {number}
        depth.append(1 + max(depth[c] for c in below) if below else 0)
    layers: list[list[str]] = [[] for _ in range(max(depth, default=-1) + 1)]
    for node in nodes:
        layers[depth[component_of[node]]].append(node)
    return layers


def topological_order(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """All files, dependencies first: the layers one after another."""
    return [path for layer in dependency_layers(graph) for path in layer]


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles (components of two or more files), each sorted, sorted by first path."""
    nodes, edges = _normalized(graph)
    return sorted(c for c in _strongly_connected(nodes, edges) if len(c) > 1)
