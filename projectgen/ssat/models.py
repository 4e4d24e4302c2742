"""The SSAT's shape: immutable Pydantic models and the rules that span several fields.

Shape: a flat list of files (keyed by path) plus optional modules. Nesting is implied
by the paths, which keeps the JSON a model must write simple. A module is a package
folder (`path`) or, as the ProjectGen paper's SSAT has it, a logical unit with a `name`
and the `files` it holds.

The paper's own shape loads too (`SSAT._paper_shape`): a list of modules, each nesting
its file objects; files with a `name` beside their path; `global_code` for `globals`;
class `functions` for `methods`; parameters with a `description`. It is read into the
flat shape, which is what serializes, so such a tree round-trips through it.

One field's text is checked by its type (`fields`); the validators here check what
only the whole item can tell: parameter order, unique names in a scope, dependencies
on files that exist.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from projectgen.errors import ProjectGenError
from projectgen.repository import safe_relpath
from projectgen.ssat.fields import (
    ClassBases,
    Decorators,
    GlobalKind,
    Identifier,
    ImportLines,
    LenientText,
    OptExpr,
    ParameterKind,
    RepoPath,
    RepoPaths,
)
from projectgen.ssat.syntax import parameter_from_text

_KIND_ORDER = MappingProxyType(
    {"positional_only": 0, "positional": 1, "var_positional": 2, "keyword_only": 3, "var_keyword": 4}
)
_RECEIVERS = frozenset({"self", "cls", "mcs", "mcls", "metacls"})
_CLS_RECEIVER_METHODS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
_NULLABLE_KEYS = frozenset({"type", "default", "value", "returns", "return_type", "return"})
_POSITIONAL = ("positional_only", "positional")


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    """Drop repeated entries, keeping first-seen order."""
    return tuple(dict.fromkeys(values))


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
    kind: ParameterKind = "positional"
    description: LenientText = Field("", description="what the argument is for (the paper's parameter description)")

    @model_validator(mode="before")
    @classmethod
    def _tolerate(cls, data: Any) -> Any:
        """Accept 'key: str = None' strings and '*args' / '**kwargs' names."""
        if isinstance(data, str):
            return parameter_from_text(data)
        if isinstance(data, Mapping) and isinstance(data.get("name"), str):
            name = data["name"].strip()
            stars = len(name) - len(name.lstrip("*"))
            if stars:
                kind = "var_keyword" if stars >= 2 else "var_positional"
                return {**data, "name": name.lstrip("*"), "kind": kind}
        return data


class GlobalCode(_Node):
    """A module-level name: constant, variable or type alias."""

    name: Identifier
    kind: GlobalKind = "variable"
    description: LenientText = ""
    type: OptExpr = Field(None, description="annotation source, e.g. 'int'")
    value: OptExpr = Field(None, description="value source, e.g. '30' or \"'data.json'\"")


class Attribute(_Node):
    """A class-level attribute (or dataclass field)."""

    name: Identifier
    type: OptExpr = None
    value: OptExpr = Field(None, validation_alias=AliasChoices("value", "default"))
    description: LenientText = ""


class FunctionNode(_Node):
    """A function or method signature plus what it is for; bodies come later."""

    name: Identifier
    description: LenientText = ""
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


def redefinition_allowed(fn: FunctionNode) -> bool:
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
    return [(kind, f.name) for f in functions if not redefinition_allowed(f)]


def method_receiver(fn: FunctionNode) -> str | None:
    """The implicit first parameter the stub adds to a method, if any."""
    names = {d.split("(")[0].strip().split(".")[-1] for d in fn.decorators}
    if "staticmethod" in names:
        return None
    if "classmethod" in names or fn.name in _CLS_RECEIVER_METHODS:
        return "cls"
    return "self"


def has_explicit_receiver(params: Sequence[Parameter]) -> bool:
    """Whether the method already spells out self/cls as its first parameter."""
    return bool(params) and params[0].name in _RECEIVERS and params[0].kind in _POSITIONAL


class ClassNode(_Node):
    """A class: bases, attributes and method signatures."""

    name: Identifier
    bases: ClassBases = Field(
        (), description="base classes or class keywords, e.g. ['Exception'] or ['metaclass=ABCMeta']"
    )
    description: LenientText = ""
    decorators: Decorators = Field((), description="e.g. ['dataclass']")
    attributes: tuple[Attribute, ...] = ()
    methods: tuple[FunctionNode, ...] = Field((), description="methods; 'self'/'cls' may be omitted, the stub adds it",
                                              validation_alias=AliasChoices("methods", "functions"))

    @model_validator(mode="after")
    def _check_scope(self) -> ClassNode:
        """Unique names in the class body; no keyword base twice; self/cls only first."""
        problems = _duplicate_names(
            [("attribute", a.name) for a in self.attributes] + _scope_items("method", self.methods)
        )
        keywords = [b.split("=", 1)[0] for b in self.bases if re.match(r"^\w+=", b)]
        problems += [f"class keyword {k!r} given twice" for k in _repeated(keywords)]
        for method in self.methods:
            receiver = method_receiver(method)
            if receiver and not has_explicit_receiver(method.parameters):
                names = [p.name for p in method.parameters]
                if receiver in names:
                    problems.append(f"method {method.name!r}: {receiver!r} must be the first positional parameter")
        if problems:
            raise ValueError("\n".join(f"class {self.name!r}: {p}" for p in problems))
        return self


class FileNode(_Node):
    """One repository file; only `.py` files declare code items and get stubs."""

    path: RepoPath = Field(description="relative POSIX path, e.g. 'kvstore/store.py'")
    description: LenientText = ""
    dependencies: RepoPaths = Field((), description="paths of other repo files this file uses")
    imports: ImportLines = Field((), description="extra absolute import statements, e.g. 'import json'")
    globals: tuple[GlobalCode, ...] = Field((), validation_alias=AliasChoices("globals", "global_code"))
    classes: tuple[ClassNode, ...] = ()
    functions: tuple[FunctionNode, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _file_name(cls, data: Any) -> Any:
        """The paper names a file beside its path: the name must be the path's last part (or the path)."""
        if not isinstance(data, Mapping) or "name" not in data:
            return data
        data = dict(data)
        name = data.pop("name")
        path = data.get("path")
        if path is None:
            data["path"] = name
        elif (isinstance(name, str) and isinstance(path, str)
              and name.strip() not in ("", path.strip().rsplit("/", 1)[-1])):
            raise ValueError(f"file name {name!r} is not the last part of its path {path!r}")
        return data

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
    """A module and what it is for: a package folder (`path`, its files those below it), or a logical
    unit with a `name` and the `files` it holds (the paper's modules), or both."""

    name: LenientText = Field("", description="the module's name; a folder module defaults to the folder's own name")
    path: RepoPath | None = Field(None, description="folder path, e.g. 'kvstore' or 'kvstore/backends'")
    description: LenientText = ""
    files: RepoPaths = Field((), description="paths of the SSAT files this module holds")

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        """A folder module without a name takes the folder's own name."""
        if isinstance(data, Mapping) and not data.get("name") and isinstance(data.get("path"), str):
            return {**data, "name": data["path"].strip().strip("/").rsplit("/", 1)[-1]}
        return data

    @model_validator(mode="after")
    def _check_module(self) -> ModuleNode:
        if not self.name and self.path is None:
            raise ValueError("a module needs a name (and its files) or a folder path")
        return self

    @field_validator("files")
    @classmethod
    def _dedupe(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return _unique(values)

    @property
    def key(self) -> str:
        """What identifies the module in the tree: its folder, else its name."""
        return self.path or self.name


class SSAT(_Node):
    """The whole architecture: project, optional package notes, and the files."""

    model_config = ConfigDict(serialize_by_alias=True)

    project_name: Annotated[str, Field(min_length=1)]
    description: LenientText = ""
    modules: tuple[ModuleNode, ...] = Field((), description="optional modules: package folders or logical units")
    file_nodes: tuple[FileNode, ...] = Field(alias="files")

    @model_validator(mode="before")
    @classmethod
    def _paper_shape(cls, data: Any) -> Any:
        """The paper's tree: modules that nest their file objects move them to `files`, keeping their paths."""
        if isinstance(data, list):
            raise ValueError("the SSAT is a list of modules without a project name; "
                             "load it with validate_ssat_json(data, project_name=...)")
        if not isinstance(data, Mapping) or not isinstance(data.get("modules"), (list, tuple)):
            return data
        files = list(data.get("files") or ())
        modules = []
        for module in data["modules"]:
            if isinstance(module, Mapping) and isinstance(module.get("files"), (list, tuple)):
                nested = [f for f in module["files"] if isinstance(f, Mapping)]
                files += nested
                module = {**module, "files": [(f.get("path") or f.get("name")) if isinstance(f, Mapping) else f
                                              for f in module["files"]]}
            modules.append(module)
        return {**data, "modules": modules, "files": files}

    @model_validator(mode="after")
    def _check_tree(self) -> SSAT:
        """Cross-file rules: unique paths, known dependencies, folders that exist."""
        problems = [] if self.file_nodes else ["an SSAT needs at least one file"]
        problems += [f"duplicate file path {p!r}" for p in _repeated(f.path for f in self.file_nodes)]
        problems += [f"duplicate module {p!r}" for p in _repeated(m.key for m in self.modules)]
        paths = {f.path for f in self.file_nodes}
        folders = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
        problems += [f"{p!r} is a file but also a folder of other files" for p in sorted(paths & folders)]
        for module in self.modules:
            if module.path is not None and module.path not in folders:
                problems.append(f"module {module.path!r} has no files; add files below it or drop it")
            problems += [f"module {module.key!r} lists {p!r}, which is not a file of the SSAT"
                         for p in module.files if p not in paths]
        owners: dict[str, list[str]] = {}
        for module in self.modules:
            for p in module.files:
                owners.setdefault(p, []).append(module.key)
        problems += [f"file {p!r} is in more than one module ({', '.join(keys)})"
                     for p, keys in owners.items() if len(keys) > 1]
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
