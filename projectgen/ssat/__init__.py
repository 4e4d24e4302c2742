"""Semantic Software Architecture Tree (SSAT): the architecture passed between stages.

The architect model writes an SSAT as JSON; the skeleton and coder stages trust it.
So every name is checked to be a Python identifier, every path to stay inside the
repository, and every piece of source text (types, defaults, bases, decorators)
to be an expression that fits wherever the stub renderer puts it: for any SSAT that
validates, `render_stub` produces code that compiles.

Shape: a flat list of files (keyed by path) plus optional package descriptions.
Nesting is implied by the paths, which keeps the JSON a model must write simple.
"""
from __future__ import annotations

import __future__
import ast
import inspect
import json
import keyword
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from projectgen.errors import ProjectGenError
from projectgen.repository import safe_relpath

__all__ = [
    "SSAT",
    "Attribute",
    "ClassNode",
    "FileNode",
    "FunctionNode",
    "GlobalCode",
    "ModuleNode",
    "Parameter",
    "SSATValidationError",
    "diff_ssat",
    "render_diff",
    "render_file",
    "render_stub",
    "render_tree",
    "ssat_from_repository",
    "unparsable_files",
    "validate_ssat_json",
]

ParamKind = Literal["positional_only", "positional", "var_positional", "keyword_only", "var_keyword"]
GlobalKind = Literal["constant", "variable", "type_alias"]

_KIND_ORDER = MappingProxyType(
    {"positional_only": 0, "positional": 1, "var_positional": 2, "keyword_only": 3, "var_keyword": 4}
)
_KIND_ALIASES = MappingProxyType(
    {
        "positional_or_keyword": "positional",
        "keyword": "keyword_only",
        "kwonly": "keyword_only",
        "args": "var_positional",
        "varargs": "var_positional",
        "kwargs": "var_keyword",
        "varkw": "var_keyword",
        "alias": "type_alias",
        "const": "constant",
    }
)
_RECEIVERS = frozenset({"self", "cls", "mcs", "mcls", "metacls"})
_CLS_RECEIVER_METHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
_NULLABLE_KEYS = frozenset({"type", "default", "value", "returns", "return_type", "return"})
_POSITIONAL = ("positional_only", "positional")

# One snippet that puts an expression in every place the stub renderer uses one.
_EXPR_CONTEXTS = (
    "@{e}\nclass _C({e}):\n    _a: {e} = {e}\n"
    "    def _f(self, _b: {e} = {e}, *_c: {e}, _d: {e} = {e}, **_e: {e}) -> {e}:\n        pass\n"
    "_g: {e} = {e}\n"
)


# --------------------------------------------------------------------------- field checks


def _identifier(value: str) -> str:
    """A name the stub can define: identifier, not a keyword, NFKC-normal (as Python sees it)."""
    name = unicodedata.normalize("NFKC", value)
    if not name.isidentifier():
        raise ValueError(f"{value!r} is not a valid Python identifier")
    if keyword.iskeyword(name) or name == "__debug__":
        raise ValueError(f"{value!r} is a reserved Python word and cannot be used as a name")
    return name


def _fits(text: str) -> bool:
    """Whether the expression compiles in every stub position."""
    try:
        compile(_EXPR_CONTEXTS.format(e=text), "<ssat>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _expression(value: str) -> str:
    """Normalize source text of an expression to one canonical line (comments dropped)."""
    try:
        tree = ast.parse(value, mode="eval")
    except (SyntaxError, ValueError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise ValueError(f"{value!r} is not a valid Python expression ({reason})") from None
    if any(isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)) for node in ast.walk(tree)):
        raise ValueError(f"{value!r}: await/yield are not allowed in an annotation, default or value")
    text = ast.unparse(tree)
    for candidate in (text, f"({text})"):
        if _fits(candidate):
            return candidate
    raise ValueError(f"{value!r} cannot be used as an annotation, default or value")


def _blank_to_none(value: Any) -> Any:
    """Models write "" for "no type"; treat it as absent."""
    return None if isinstance(value, str) and not value.strip() else value


def _decorator(value: str) -> str:
    """Decorator source text, with or without the leading '@'."""
    return _expression(value.strip().removeprefix("@"))


def _base(value: str) -> str:
    """A class base (`Base`, `Generic[T]`) or class keyword (`metaclass=ABCMeta`)."""
    try:
        node = ast.parse(f"class _C({value}): pass").body[0]
    except (SyntaxError, ValueError):
        node = None
    if not isinstance(node, ast.ClassDef) or len(node.bases) + len(node.keywords) != 1:
        raise ValueError(f"{value!r} is not a single class base or keyword like 'metaclass=ABCMeta'")
    if node.bases:
        base = node.bases[0]
        if isinstance(base, ast.Starred):
            return "*" + _expression(ast.unparse(base.value))
        return _expression(ast.unparse(base))
    kw = node.keywords[0]
    return (f"{kw.arg}=" if kw.arg else "**") + _expression(ast.unparse(kw.value))


def _import_line(value: str) -> str:
    """One absolute `import x` / `from x import y` statement, normalized."""
    try:
        body = ast.parse(value).body
    except (SyntaxError, ValueError):
        body = []
    if len(body) != 1 or not isinstance(body[0], (ast.Import, ast.ImportFrom)):
        raise ValueError(f"{value!r} is not a single 'import x' or 'from x import y' statement")
    node = body[0]
    if isinstance(node, ast.ImportFrom) and node.level:
        raise ValueError(f"{value!r}: relative imports are not allowed; list the repo file in 'dependencies'")
    if isinstance(node, ast.ImportFrom) and node.module == "__future__":
        unknown = [a.name for a in node.names if a.name not in __future__.all_feature_names]
        if unknown:
            raise ValueError(f"{value!r}: unknown __future__ feature {unknown[0]!r}")
    return ast.unparse(node)


def _repo_path(value: str) -> str:
    """Relative, normalized, inside the repository (see `safe_relpath`)."""
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise ValueError(f"{value!r}: path contains control characters")
    try:
        path = safe_relpath(value)
    except ProjectGenError as exc:
        raise ValueError(str(exc)) from None
    if ".git" in path.split("/"):
        raise ValueError(f"{value!r}: paths inside .git are not allowed")
    return path


def _listify(value: Any) -> Any:
    """Accept a lone string where a list is expected (a common model slip)."""
    return [value] if isinstance(value, str) else value


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    """Drop repeated entries, keeping first-seen order."""
    return tuple(dict.fromkeys(values))


def _normalize_kind(value: Any) -> Any:
    """Lower-case kinds and map common spellings (`keyword-only`, `kwargs`) to ours."""
    if not isinstance(value, str):
        return value
    key = value.strip().lower().replace("-", "_").replace(" ", "_").lstrip("*")
    return _KIND_ALIASES.get(key, key)


Identifier = Annotated[str, AfterValidator(_identifier)]
OptExpr = Annotated[str | None, BeforeValidator(_blank_to_none), AfterValidator(lambda v: v and _expression(v))]
Text = Annotated[str, BeforeValidator(lambda v: "" if v is None else v)]
RepoPath = Annotated[str, AfterValidator(_repo_path)]
ImportLine = Annotated[str, AfterValidator(_import_line)]
Decorators = Annotated[tuple[Annotated[str, AfterValidator(_decorator)], ...], BeforeValidator(_listify)]


# --------------------------------------------------------------------------- models


class _Node(BaseModel):
    """Immutable, strict about unknown fields (typos become feedback), lenient about nulls."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        """`"bases": null` means "none": fall back to the field default."""
        if isinstance(data, Mapping):
            return {k: v for k, v in data.items() if v is not None or k in _NULLABLE_KEYS}
        return data


class Parameter(_Node):
    """One function parameter; `type` and `default` are Python source text."""

    name: Identifier
    type: OptExpr = Field(None, description="annotation source, e.g. 'dict[str, int] | None'")
    default: OptExpr = Field(None, description="default value source, e.g. 'None' or \"'utf-8'\"")
    kind: Annotated[ParamKind, BeforeValidator(_normalize_kind)] = "positional"

    @model_validator(mode="before")
    @classmethod
    def _tolerate(cls, data: Any) -> Any:
        """Accept 'key: str = None' strings and '*args' / '**kwargs' names."""
        if isinstance(data, str):
            return _parameter_from_text(data)
        if isinstance(data, Mapping) and isinstance(data.get("name"), str):
            name = data["name"].strip()
            stars = len(name) - len(name.lstrip("*"))
            if stars:
                kind = "var_keyword" if stars >= 2 else "var_positional"
                return {**data, "name": name.lstrip("*"), "kind": kind}
        return data


def _parameter_from_text(text: str) -> dict[str, Any]:
    """Parse one parameter written as source ('key: str = None', '**kw')."""
    if text.strip() in ("*", "/"):
        raise ValueError(
            f"{text.strip()!r} is a marker, not a parameter; set kind='keyword_only' or "
            "'positional_only' on the parameters instead"
        )
    try:
        node = ast.parse(f"def _f({text}): pass").body[0]
    except (SyntaxError, ValueError):
        node = None
    params = _params_from_ast(node.args) if isinstance(node, ast.FunctionDef) else []
    if len(params) != 1:
        raise ValueError(f"{text!r} is not one parameter; write {{'name': ..., 'type': ..., 'default': ...}}")
    return params[0]


class GlobalCode(_Node):
    """A module-level name: constant, variable or type alias."""

    name: Identifier
    kind: Annotated[GlobalKind, BeforeValidator(_normalize_kind)] = "variable"
    description: Text = ""
    type: OptExpr = Field(None, description="annotation source, e.g. 'int'")
    value: OptExpr = Field(None, description="value source, e.g. '30' or \"'data.json'\"")


class Attribute(_Node):
    """A class-level attribute (or dataclass field)."""

    name: Identifier
    type: OptExpr = None
    value: OptExpr = Field(None, validation_alias=AliasChoices("value", "default"))
    description: Text = ""


class FunctionNode(_Node):
    """A function or method signature plus what it is for; bodies come later."""

    name: Identifier
    description: Text = ""
    parameters: tuple[Parameter, ...] = Field((), validation_alias=AliasChoices("parameters", "params"))
    returns: OptExpr = Field(None, validation_alias=AliasChoices("returns", "return_type", "return"))
    is_async: bool = False
    decorators: Decorators = Field((), description="e.g. ['staticmethod'], ['property']")

    @model_validator(mode="after")
    def _check_parameters(self) -> FunctionNode:
        """Reject parameter lists that are not valid Python signatures."""
        problems = _parameter_problems(self.parameters)
        if problems:
            raise ValueError("\n".join(f"{self.name}(): {p}" for p in problems))
        return self


def _parameter_problems(params: Sequence[Parameter]) -> list[str]:
    """Everything wrong with a parameter list, in words a model can act on."""
    problems: list[str] = []
    seen: set[str] = set()
    for p in params:
        if p.name in seen:
            problems.append(f"duplicate parameter {p.name!r}")
        seen.add(p.name)
    for kind, shown in (("var_positional", "*args"), ("var_keyword", "**kwargs")):
        names = [p.name for p in params if p.kind == kind]
        if len(names) > 1:
            problems.append(f"at most one {shown} parameter allowed, got {names}")
        if any(p.kind == kind and p.default is not None for p in params):
            problems.append(f"{shown} parameter cannot have a default")
    for before, after in zip(params, params[1:]):
        if _KIND_ORDER[after.kind] < _KIND_ORDER[before.kind]:
            problems.append(
                f"parameter {after.name!r} ({after.kind}) cannot follow {before.name!r} ({before.kind}); "
                "order is positional_only, positional, var_positional, keyword_only, var_keyword"
            )
    with_default = None
    for p in params:
        if p.kind not in _POSITIONAL:
            continue
        if p.default is not None:
            with_default = p.name
        elif with_default:
            problems.append(f"parameter {p.name!r} has no default but follows {with_default!r}, which has one")
    return problems


def _redefinition_allowed(fn: FunctionNode) -> bool:
    """@overload variants and property setters/deleters legitimately reuse a name."""
    accessors = {f"{fn.name}.setter", f"{fn.name}.deleter", f"{fn.name}.getter"}
    return any(d.split("(")[0].split(".")[-1] == "overload" or d in accessors for d in fn.decorators)


def _duplicate_names(items: Sequence[tuple[str, str]]) -> list[str]:
    """'duplicate name' problems for (kind, name) pairs sharing one scope."""
    kinds_by_name: dict[str, list[str]] = {}
    for kind, name in items:
        kinds_by_name.setdefault(name, []).append(kind)
    return [
        f"duplicate name {name!r} (defined as {' and '.join(kinds)})"
        for name, kinds in kinds_by_name.items()
        if len(kinds) > 1
    ]


def _scope_items(kind: str, functions: Sequence[FunctionNode]) -> list[tuple[str, str]]:
    """Functions that count for the duplicate check (overloads/setters do not)."""
    return [(kind, f.name) for f in functions if not _redefinition_allowed(f)]


def _receiver(fn: FunctionNode) -> str | None:
    """The implicit first parameter the stub adds to a method, if any."""
    names = {d.split("(")[0].strip().split(".")[-1] for d in fn.decorators}
    if "staticmethod" in names:
        return None
    if "classmethod" in names or fn.name in _CLS_RECEIVER_METHODS:
        return "cls"
    return "self"


def _has_receiver(params: Sequence[Parameter]) -> bool:
    """Whether the method already spells out self/cls as its first parameter."""
    return bool(params) and params[0].name in _RECEIVERS and params[0].kind in _POSITIONAL


class ClassNode(_Node):
    """A class: bases, attributes and method signatures."""

    name: Identifier
    bases: Annotated[tuple[Annotated[str, AfterValidator(_base)], ...], BeforeValidator(_listify)] = Field(
        (), description="base classes or class keywords, e.g. ['Exception'] or ['metaclass=ABCMeta']"
    )
    description: Text = ""
    decorators: Decorators = Field((), description="e.g. ['dataclass']")
    attributes: tuple[Attribute, ...] = ()
    methods: tuple[FunctionNode, ...] = Field(
        (), description="methods; 'self'/'cls' may be omitted, the stub adds it"
    )

    @model_validator(mode="after")
    def _check_scope(self) -> ClassNode:
        """Unique names in the class body; no keyword base twice; self/cls only first."""
        problems = _duplicate_names(
            [("attribute", a.name) for a in self.attributes] + _scope_items("method", self.methods)
        )
        keywords = [b.split("=", 1)[0] for b in self.bases if re.match(r"^\w+=", b)]
        problems += [f"class keyword {k!r} given twice" for k in _repeated(keywords)]
        for method in self.methods:
            receiver = _receiver(method)
            if receiver and not _has_receiver(method.parameters):
                names = [p.name for p in method.parameters]
                if receiver in names:
                    problems.append(f"method {method.name!r}: {receiver!r} must be the first positional parameter")
        if problems:
            raise ValueError("\n".join(f"class {self.name!r}: {p}" for p in problems))
        return self


class FileNode(_Node):
    """One repository file; only `.py` files declare code items and get stubs."""

    path: RepoPath = Field(description="relative POSIX path, e.g. 'kvstore/store.py'")
    description: Text = ""
    dependencies: Annotated[tuple[RepoPath, ...], BeforeValidator(_listify)] = Field(
        (), description="paths of other repo files this file uses"
    )
    imports: Annotated[tuple[ImportLine, ...], BeforeValidator(_listify)] = Field(
        (), description="extra absolute import statements, e.g. 'import json'"
    )
    globals: tuple[GlobalCode, ...] = ()
    classes: tuple[ClassNode, ...] = ()
    functions: tuple[FunctionNode, ...] = ()

    @field_validator("dependencies", "imports")
    @classmethod
    def _dedupe(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        """Repeats carry no meaning; drop them silently."""
        return _unique(values)

    @model_validator(mode="after")
    def _check_scope(self) -> FileNode:
        """Unique top-level names; code items only in .py files; no self-dependency."""
        problems = _duplicate_names(
            [("global", g.name) for g in self.globals]
            + [("class", c.name) for c in self.classes]
            + _scope_items("function", self.functions)
        )
        if not self.path.endswith(".py") and (self.globals or self.classes or self.functions or self.imports):
            problems.append("only .py files can declare imports, globals, classes or functions")
        if self.path in self.dependencies:
            problems.append("a file cannot depend on itself")
        if problems:
            raise ValueError("\n".join(f"file {self.path!r}: {p}" for p in problems))
        return self


class ModuleNode(_Node):
    """A package (folder) and what it is for; its files are those below `path`."""

    path: RepoPath = Field(description="folder path, e.g. 'kvstore' or 'kvstore/backends'")
    description: Text = ""

    @property
    def name(self) -> str:
        """The folder's own name."""
        return self.path.rsplit("/", 1)[-1]


class SSAT(_Node):
    """The whole architecture: project, optional package notes, and the files."""

    model_config = ConfigDict(serialize_by_alias=True)

    project_name: Annotated[str, Field(min_length=1)]
    description: Text = ""
    modules: tuple[ModuleNode, ...] = Field((), description="optional notes on packages (folders)")
    file_nodes: tuple[FileNode, ...] = Field(alias="files")

    @model_validator(mode="after")
    def _check_tree(self) -> SSAT:
        """Cross-file rules: unique paths, known dependencies, folders that exist."""
        problems = [] if self.file_nodes else ["an SSAT needs at least one file"]
        problems += [f"duplicate file path {p!r}" for p in _repeated(f.path for f in self.file_nodes)]
        problems += [f"duplicate module path {p!r}" for p in _repeated(m.path for m in self.modules)]
        paths = {f.path for f in self.file_nodes}
        folders = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
        problems += [f"{p!r} is a file but also a folder of other files" for p in sorted(paths & folders)]
        for module in self.modules:
            if module.path not in folders:
                problems.append(f"module {module.path!r} has no files; add files below it or drop it")
        for node in self.file_nodes:
            for dep in node.dependencies:
                if dep not in paths:
                    problems.append(f"file {node.path!r} depends on {dep!r}, which is not a file of the SSAT")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def files(self) -> list[FileNode]:
        """All files, sorted by path."""
        return sorted(self.file_nodes, key=lambda f: f.path)

    def file(self, path: str) -> FileNode:
        """The file at `path` (normalized first); KeyError when there is none."""
        try:
            wanted = safe_relpath(path)
        except ProjectGenError:
            raise KeyError(path) from None
        for node in self.file_nodes:
            if node.path == wanted:
                return node
        raise KeyError(path)


def _repeated(values: Iterator[str] | Sequence[str]) -> list[str]:
    """Values that occur more than once, in first-seen order."""
    seen: dict[str, int] = {}
    for value in values:
        seen[value] = seen.get(value, 0) + 1
    return [v for v, n in seen.items() if n > 1]


# --------------------------------------------------------------------------- validation entry point


class SSATValidationError(ProjectGenError):
    """An SSAT the model wrote is invalid; the message lists every problem, one per line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid SSAT:\n" + "\n".join(f"- {p}" for p in problems))


def validate_ssat_json(data: str | bytes | Mapping[str, Any] | SSAT) -> SSAT:
    """Parse and validate model output; raise SSATValidationError with readable problems.

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
    if not isinstance(data, Mapping):
        raise SSATValidationError([*problems, f"the SSAT must be a JSON object, got {type(data).__name__}"])
    try:
        ssat = SSAT.model_validate(data)
    except ValidationError as exc:
        problems += _format_errors(exc, data)
    if problems:
        raise SSATValidationError(problems)
    return ssat


def _child_model(key: str) -> type[BaseModel] | None:
    """Which model a list under `key` holds (for 'allowed fields' hints)."""
    return {
        "files": FileNode,
        "modules": ModuleNode,
        "classes": ClassNode,
        "functions": FunctionNode,
        "methods": FunctionNode,
        "parameters": Parameter,
        "params": Parameter,
        "globals": GlobalCode,
        "attributes": Attribute,
    }.get(key)


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
                model = _child_model(part) or model
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


# --------------------------------------------------------------------------- rendering helpers


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
    items = [receiver] if receiver and not _has_receiver(params) else []
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


def _signature(fn: FunctionNode, receiver: str | None) -> str:
    """One-line signature including decorators, for prompts and diffs."""
    return " ".join([*(f"@{d}" for d in fn.decorators), _def_line(fn, receiver)])


def _class_header(cls: ClassNode) -> str:
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


def _module_name(path: str) -> str | None:
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


def _imported_modules(lines: Sequence[str]) -> set[str]:
    """Modules that import lines already bring in (so dependencies need no extra line)."""
    modules: set[str] = set()
    for line in lines:
        node = ast.parse(line).body[0]
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
    modules = [m for m in map(_module_name, file.dependencies) if m and m not in covered]
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
        node = ast.parse(line).body[0]
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


def _function_lines(fn: FunctionNode, indent: str, receiver: str | None) -> list[str]:
    """Decorators, def line, docstring, `pass`."""
    lines = [f"{indent}@{d}" for d in fn.decorators]
    lines.append(f"{indent}{_def_line(fn, receiver)}:")
    if fn.description:
        lines.append(_docstring(fn.description, indent + "    "))
    lines.append(f"{indent}    pass")
    return lines


def _class_code(cls: ClassNode) -> str:
    """A class with docstring, annotated attributes and stub methods."""
    head = [*(f"@{d}" for d in cls.decorators), f"{_class_header(cls)}:"]
    groups: list[list[str]] = []
    if cls.description:
        groups.append([_docstring(cls.description, "    ")])
    if cls.attributes:
        attrs: list[str] = []
        for a in cls.attributes:
            attrs += _comment(a.description, "    ")
            attrs.append("    " + _assignment(a.name, a.type, a.value, bind=False))
        groups.append(attrs)
    groups += [_function_lines(m, "    ", _receiver(m)) for m in cls.methods]
    if not groups:
        groups.append(["    pass"])
    return "\n".join(head) + "\n" + "\n\n".join("\n".join(g) for g in groups)


def render_tree(ssat: SSAT) -> str:
    """Compact prompt text: one line per package, file, global, class, attribute, function."""
    lines = [f"Project {ssat.project_name}" + (f": {_summary(ssat.description)}" if ssat.description else "")]
    for m in sorted(ssat.modules, key=lambda m: m.path):
        lines.append(f"package {m.path}/" + (f": {_summary(m.description)}" if m.description else ""))
    for f in ssat.files():
        line = f.path + (f": {_summary(f.description)}" if f.description else "")
        if f.dependencies:
            line += f" [uses {', '.join(f.dependencies)}]"
        lines.append(line)
        lines += [f"  {_declared(g.name, g.type)}" for g in f.globals]
        for c in f.classes:
            lines.append("  " + " ".join([*(f"@{d}" for d in c.decorators), _class_header(c)]))
            lines += [f"    {_declared(a.name, a.type)}" for a in c.attributes]
            lines += [f"    {_signature(m, _receiver(m))}" for m in c.methods]
        lines += [f"  {_signature(fn, None)}" for fn in f.functions]
    return "\n".join(lines)


def _declared(name: str, type_: str | None) -> str:
    """'name: type' or just 'name' (tree lines leave values out)."""
    return f"{name}: {type_}" if type_ else name


def render_file(ssat: SSAT, path: str) -> str:
    """Detailed text for one file: descriptions, neighbours, every signature."""
    f = ssat.file(path)
    lines = [f"File {f.path}"]
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
        lines.append(" ".join([*(f"@{d}" for d in c.decorators), _class_header(c)]) + ":")
        if c.description:
            lines += _indented(c.description, "    ")
        for a in c.attributes:
            text = _assignment(a.name, a.type, a.value, bind=False)
            lines.append(f"  - attribute {text}" + (f": {a.description}" if a.description else ""))
        for m in c.methods:
            lines.append(f"  - {_signature(m, _receiver(m))}")
            lines += _indented(m.description, "      ")
    if f.functions:
        lines.append("Functions:")
        for fn in f.functions:
            lines.append(f"  - {_signature(fn, None)}")
            lines += _indented(fn.description, "      ")
    return "\n".join(lines)


def _indented(text: str, indent: str) -> list[str]:
    """A description block, indented under its item."""
    return [f"{indent}{line}".rstrip() for line in inspect.cleandoc(text).split("\n")] if text else []


# --------------------------------------------------------------------------- from source


def _parse(path: str, text: str) -> ast.Module | None:
    """The module's AST, or None when it does not parse."""
    try:
        return ast.parse(text, filename=path)
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
        name = _module_name(path)
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


def _src(node: ast.AST | None) -> str | None:
    """Source text of an optional AST node."""
    return None if node is None else ast.unparse(node)


def _first_line(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """First non-empty docstring line."""
    doc = ast.get_docstring(node) or ""  # type: ignore[arg-type]
    return next((line.strip() for line in doc.splitlines() if line.strip()), "")


def _params_from_ast(args: ast.arguments) -> list[dict[str, Any]]:
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
    return {"name": arg.arg, "type": _src(arg.annotation), "default": _src(default), "kind": kind}


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
        "description": _first_line(node),
        "parameters": _params_from_ast(node.args),
        "returns": _src(node.returns),
        "is_async": isinstance(node, ast.AsyncFunctionDef),
        "decorators": [ast.unparse(d) for d in node.decorator_list],
    }
    return _validated(FunctionNode, data, _bare_function)


def _assigned(stmt: ast.stmt) -> list[tuple[str, str | None, str | None]]:
    """(name, type, value) for simple assignments; `a, b = 1, 2` is split, `a, b = f()` gets no value."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [(stmt.target.id, _src(stmt.annotation), _src(stmt.value))]
    if isinstance(stmt, ast.Assign):
        out: list[tuple[str, str | None, str | None]] = []
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                out.append((target.id, None, _src(stmt.value)))
            elif isinstance(target, (ast.Tuple, ast.List)):
                values = stmt.value.elts if isinstance(stmt.value, (ast.Tuple, ast.List)) else []
                if len(values) != len(target.elts):
                    values = [None] * len(target.elts)
                out += [(e.id, None, _src(v)) for e, v in zip(target.elts, values) if isinstance(e, ast.Name)]
        return out
    type_alias = getattr(ast, "TypeAlias", None)  # `type X = ...` (Python 3.12+)
    if type_alias and isinstance(stmt, type_alias):
        return [(stmt.name.id, "TypeAlias", _src(stmt.value))]
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
        "description": _first_line(node),
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
        if isinstance(item, FunctionNode) and _redefinition_allowed(item):
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
    found = {
        next((modules[c] for c in candidates if c in modules), None)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for candidates in _import_targets(node, package)
    }
    dependencies = sorted(found - {None, path})
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
    statements = list(_flatten(tree.body))
    items = _first_definitions(
        _class_from_ast(s) if isinstance(s, ast.ClassDef) else _function_from_ast(s)
        for s in statements
        if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    )
    classes = [i for i in items if isinstance(i, ClassNode)]
    functions = [i for i in items if isinstance(i, FunctionNode)]
    taken = {i.name for i in items}
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
    return {
        "path": path,
        "description": _first_line(tree),
        "dependencies": dependencies,
        "imports": imports,
        "globals": globals_,
        "classes": classes,
        "functions": functions,
    }


# --------------------------------------------------------------------------- diff


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
        return {"signature": _signature(fn, receiver), "description": fn.description}

    def cls(c: ClassNode) -> dict[str, Any]:
        return {
            "signature": " ".join([*(f"@{d}" for d in c.decorators), _class_header(c)]),
            "description": c.description,
            "attributes": _keyed(c.attributes, lambda a: {**a.model_dump(exclude={"name"}), **typed(a)}),
            "methods": _keyed(c.methods, lambda m: function(m, _receiver(m))),
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
        "modules": {m.path: m.description for m in ssat.modules},
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
            elif key in ("dependencies", "imports"):
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
