"""SSAT as text: compilable stubs for the skeleton, compact trees and file views for prompts.

`render_stub` is the one place source code comes out of an SSAT; for any SSAT that
validates, it produces code that compiles (the field types in `fields` guarantee each
piece fits). `render_tree` and `render_file` are what the models read. `signature` and
`class_header` are shared with `diff`, so a diff names items the way prompts show them.
"""
from __future__ import annotations

import ast
import inspect
import re
import unicodedata
from collections.abc import Sequence

from projectgen.repository.syntax import parse_python
from projectgen.ssat.models import (
    SSAT,
    ClassNode,
    FileNode,
    FunctionNode,
    GlobalCode,
    Parameter,
    has_explicit_receiver,
    method_receiver,
)
from projectgen.ssat.syntax import module_name

# --------------------------------------------------------------------------- pieces of code


def _escape_text(text: str, backslashes: bool = True) -> str:
    """Control characters and lone surrogates escaped (source-safe); backslashes doubled for strings."""
    out: list[str] = []
    for ch in text.replace("\r\n", "\n").replace("\r", "\n"):
        if ch == "\\" and backslashes:
            out.append("\\\\")
        elif ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cs"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _docstring(text: str, indent: str) -> str:
    """A triple-quoted docstring that always tokenizes, whatever the text holds."""
    # Escape each quote that starts a run of three, and a final quote (it would touch the closing """).
    body = re.sub(r'"(?="")|"\Z', r'\\"', _escape_text(inspect.cleandoc(text)))
    lines = body.split("\n")
    if len(lines) == 1:
        return f'{indent}"""{body}"""'
    rest = [f"{indent}{line}" if line.strip() else "" for line in lines[1:]]
    return "\n".join([f'{indent}"""{lines[0]}', *rest, f'{indent}"""'])


def _comment(text: str, indent: str) -> list[str]:
    """Description as comment lines (for globals and attributes)."""
    if not text:
        return []
    return [f"{indent}# {line}".rstrip() for line in _escape_text(text, backslashes=False).split("\n")]


def _summary(text: str, limit: int = 80) -> str:
    """First line of a description, shortened for prompts."""
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def _param_text(p: Parameter) -> str:
    """'name: type = default' with the stars the kind implies."""
    stars = {"var_positional": "*", "var_keyword": "**"}.get(p.kind, "")
    text = stars + p.name + (f": {p.type}" if p.type else "")
    if p.default is not None:
        text += f" = {p.default}" if p.type else f"={p.default}"
    return text


def _params_text(fn: FunctionNode, receiver: str | None) -> str:
    """The parameter list, with `/` and bare `*` markers where the kinds need them."""
    params = fn.parameters
    items = [receiver] if receiver and not has_explicit_receiver(params) else []
    kinds = {p.kind for p in params}
    needs_star = "keyword_only" in kinds and "var_positional" not in kinds
    for i, p in enumerate(params):
        if p.kind == "keyword_only" and needs_star:
            items.append("*")
            needs_star = False
        items.append(_param_text(p))
        if p.kind == "positional_only" and (i + 1 == len(params) or params[i + 1].kind != "positional_only"):
            items.append("/")
    return ", ".join(items)


def _def_line(fn: FunctionNode, receiver: str | None) -> str:
    """'async def name(params) -> ret' (no colon)."""
    prefix = "async def" if fn.is_async else "def"
    returns = f" -> {fn.returns}" if fn.returns else ""
    return f"{prefix} {fn.name}({_params_text(fn, receiver)}){returns}"


def signature(fn: FunctionNode, receiver: str | None) -> str:
    """One-line signature including decorators, for prompts and diffs."""
    return " ".join([*(f"@{d}" for d in fn.decorators), _def_line(fn, receiver)])


def class_header(cls: ClassNode) -> str:
    """'class Name(Base, metaclass=M)' with positional bases first (required by Python)."""
    keywords = [b for b in cls.bases if re.match(r"^(\w+=|\*\*)", b)]
    ordered = [b for b in cls.bases if b not in keywords] + keywords
    return f"class {cls.name}({', '.join(ordered)})" if ordered else f"class {cls.name}"


def _assignment(name: str, type_: str | None, value: str | None, bind: bool) -> str:
    """`name: type = value`; with `bind`, a missing value becomes a `None` placeholder."""
    annotation = f": {type_}" if type_ else ""
    if value is None and (bind or not type_):
        value = "None"
    return f"{name}{annotation} = {value}" if value is not None else f"{name}{annotation}"


def _imported_modules(lines: Sequence[str]) -> set[str]:
    """Modules that import lines already bring in (so dependencies need no extra line)."""
    modules: set[str] = set()
    for line in lines:
        node = parse_python(line).body[0]
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
            modules.update(f"{node.module}.{a.name}" for a in node.names)
    return modules


def _dependency_imports(file: FileNode, other_imports: Sequence[str]) -> list[str]:
    """Import lines for repo .py dependencies: `pkg/errors.py` -> `from pkg import errors`.

    Top-level modules become `import name`; a leaf name shared by two dependencies is
    aliased (`from a import utils as a_utils`). Non-.py and non-importable paths
    (e.g. 'scripts/run-demo.py') get no line.
    """
    covered = _imported_modules(other_imports)
    modules = [m for m in map(module_name, file.dependencies) if m and m not in covered]
    leaves = [m.rsplit(".", 1)[-1] for m in modules]
    lines = []
    for module, leaf in zip(modules, leaves):
        if "." not in module:
            lines.append(f"import {module}")
            continue
        parent = module.rsplit(".", 1)[0]
        alias = f" as {module.replace('.', '_')}" if leaves.count(leaf) > 1 else ""
        lines.append(f"from {parent} import {leaf}{alias}")
    return lines


# --------------------------------------------------------------------------- renderers


def render_stub(file: FileNode) -> str:
    """Deterministic skeleton code for a .py file: signatures, docstrings, `pass` bodies.

    Layout: docstring, `from __future__ import annotations` (so annotations that name
    not-yet-written types never fail at import), imports, plain globals, classes,
    type aliases (after the classes they may name), functions. Non-.py files and
    completely empty file nodes render as "".
    """
    if not file.path.endswith(".py"):
        return ""
    if not (file.description or file.imports or file.dependencies or file.globals or file.classes or file.functions):
        return ""  # an empty __init__.py stays empty
    futures = {"annotations"}
    imports: list[str] = []
    for line in file.imports:
        node = parse_python(line).body[0]
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            futures.update(a.name for a in node.names)
        else:
            imports.append(line)
    imports += _dependency_imports(file, imports)
    header = ([_docstring(file.description, "")] if file.description else []) + [
        f"from __future__ import {', '.join(sorted(futures))}"
    ]
    sections = ["\n".join(header)]
    if imports:
        sections.append("\n".join(imports))
    plain = [g for g in file.globals if g.kind != "type_alias"]
    aliases = [g for g in file.globals if g.kind == "type_alias"]
    if plain:
        sections.append("\n".join(_global_lines(plain)))
    blocks = [_class_code(c) for c in file.classes]
    if aliases:
        blocks.append("\n".join(_global_lines(aliases)))
    blocks += ["\n".join(_function_lines(f, "", None)) for f in file.functions]
    code = "\n\n".join(sections)
    if blocks:
        code += "\n\n\n" + "\n\n\n".join(blocks)
    return code + "\n"


def _global_lines(items: Sequence[GlobalCode]) -> list[str]:
    """Globals with their descriptions as comments; always bound (import-safe)."""
    lines: list[str] = []
    for g in items:
        lines += _comment(g.description, "")
        lines.append(_assignment(g.name, g.type, g.value, bind=True))
    return lines


def described(fn: FunctionNode) -> str:
    """A function's description and, under "Args:", its parameters' descriptions (the stub's docstring)."""
    args = [f"    {p.name}: {' '.join(p.description.split())}" for p in fn.parameters if p.description]
    if not args:
        return fn.description
    return "\n".join([*([inspect.cleandoc(fn.description), ""] if fn.description else []), "Args:", *args])


def _function_lines(fn: FunctionNode, indent: str, receiver: str | None) -> list[str]:
    """Decorators, def line, docstring, `pass`."""
    lines = [f"{indent}@{d}" for d in fn.decorators]
    lines.append(f"{indent}{_def_line(fn, receiver)}:")
    if text := described(fn):
        lines.append(_docstring(text, indent + "    "))
    lines.append(f"{indent}    pass")
    return lines


def _class_code(cls: ClassNode) -> str:
    """A class with docstring, annotated attributes and stub methods."""
    head = [*(f"@{d}" for d in cls.decorators), f"{class_header(cls)}:"]
    groups: list[list[str]] = []
    if cls.description:
        groups.append([_docstring(cls.description, "    ")])
    if cls.attributes:
        attrs: list[str] = []
        for a in cls.attributes:
            attrs += _comment(a.description, "    ")
            attrs.append("    " + _assignment(a.name, a.type, a.value, bind=False))
        groups.append(attrs)
    groups += [_function_lines(m, "    ", method_receiver(m)) for m in cls.methods]
    if not groups:
        groups.append(["    pass"])
    return "\n".join(head) + "\n" + "\n\n".join("\n".join(g) for g in groups)


def render_tree(ssat: SSAT) -> str:
    """Compact prompt text: one line per package, file, global, class, attribute, function."""
    lines = [f"Project {ssat.project_name}" + (f": {_summary(ssat.description)}" if ssat.description else "")]
    for m in sorted(ssat.modules, key=lambda m: m.key):
        line = f"package {m.path}/" if m.path is not None else f"module {m.name}"
        line += f": {_summary(m.description)}" if m.description else ""
        lines.append(line + (f" [files {', '.join(m.files)}]" if m.files else ""))
    for f in ssat.files():
        line = f.path + (f": {_summary(f.description)}" if f.description else "")
        if f.dependencies:
            line += f" [uses {', '.join(f.dependencies)}]"
        lines.append(line)
        lines += [f"  {_declared(g.name, g.type)}" for g in f.globals]
        for c in f.classes:
            lines.append("  " + " ".join([*(f"@{d}" for d in c.decorators), class_header(c)]))
            lines += [f"    {_declared(a.name, a.type)}" for a in c.attributes]
            lines += [f"    {signature(m, method_receiver(m))}" for m in c.methods]
        lines += [f"  {signature(fn, None)}" for fn in f.functions]
    return "\n".join(lines)


def _declared(name: str, type_: str | None) -> str:
    """'name: type' or just 'name' (tree lines leave values out)."""
    return f"{name}: {type_}" if type_ else name


def render_file(ssat: SSAT, path: str) -> str:
    """Detailed text for one file: descriptions, neighbours, every signature."""
    f = ssat.file(path)
    lines = [f"File {f.path}"]
    lines += [f"Module: {m.name}" + (f": {_summary(m.description)}" if m.description else "")
              for m in ssat.modules if f.path in m.files]
    if f.description:
        lines.append(f"Description: {f.description}")
    if f.dependencies:
        lines.append("Depends on:")
        for dep in map(ssat.file, f.dependencies):
            lines.append(f"  - {dep.path}" + (f": {_summary(dep.description)}" if dep.description else ""))
    users = [o.path for o in ssat.files() if f.path in o.dependencies]
    if users:
        lines.append("Used by: " + ", ".join(users))
    if f.imports:
        lines.append("Imports: " + "; ".join(f.imports))
    if f.globals:
        lines.append("Globals:")
        for g in f.globals:
            text = _assignment(g.name, g.type, g.value, bind=False)
            lines.append(f"  - {text} ({g.kind})" + (f": {g.description}" if g.description else ""))
    for c in f.classes:
        lines.append(" ".join([*(f"@{d}" for d in c.decorators), class_header(c)]) + ":")
        if c.description:
            lines += _indented(c.description, "    ")
        for a in c.attributes:
            text = _assignment(a.name, a.type, a.value, bind=False)
            lines.append(f"  - attribute {text}" + (f": {a.description}" if a.description else ""))
        for m in c.methods:
            lines.append(f"  - {signature(m, method_receiver(m))}")
            lines += _indented(described(m), "      ")
    if f.functions:
        lines.append("Functions:")
        for fn in f.functions:
            lines.append(f"  - {signature(fn, None)}")
            lines += _indented(described(fn), "      ")
    return "\n".join(lines)


def _indented(text: str, indent: str) -> list[str]:
    """A description block, indented under its item."""
    return [f"{indent}{line}".rstrip() for line in inspect.cleandoc(text).split("\n")] if text else []

