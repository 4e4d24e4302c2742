"""Field types of the SSAT models: one field's text checked and normalised.

The architect model writes every name, path and piece of source text (types,
defaults, bases, decorators, imports). Each type here accepts the usual slips (a lone
string for a list, `""` for "no type", `kwargs` for `var_keyword`) and rejects text
the stub renderer could not place: an expression validates only if it compiles in
every position `render_stub` puts one.
"""
from __future__ import annotations

import __future__
import ast
import keyword
import unicodedata
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator

from projectgen.errors import ProjectGenError
from projectgen.repository import safe_relpath
from projectgen.repository.syntax import parse_python

# Spellings models use for a parameter or global kind, mapped to ours.
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

# One snippet that puts an expression in every place the stub renderer uses one.
_EXPR_CONTEXTS = (
    "@{e}\nclass _C({e}):\n    _a: {e} = {e}\n"
    "    def _f(self, _b: {e} = {e}, *_c: {e}, _d: {e} = {e}, **_e: {e}) -> {e}:\n        pass\n"
    "_g: {e} = {e}\n"
)


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
        tree = parse_python(value, mode="eval")
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
        node = parse_python(f"class _C({value}): pass").body[0]
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
        body = parse_python(value).body
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


def _normalize_kind(value: Any) -> Any:
    """Lower-case kinds and map common spellings (`keyword-only`, `kwargs`) to ours."""
    if not isinstance(value, str):
        return value
    key = value.strip().lower().replace("-", "_").replace(" ", "_").lstrip("*")
    return _KIND_ALIASES.get(key, key)


Identifier = Annotated[str, AfterValidator(_identifier)]
OptExpr = Annotated[str | None, BeforeValidator(_blank_to_none), AfterValidator(lambda v: v and _expression(v))]
LenientText = Annotated[str, BeforeValidator(lambda v: "" if v is None else v)]  # a model's null reads as ""
RepoPath = Annotated[str, AfterValidator(_repo_path)]
RepoPaths = Annotated[tuple[RepoPath, ...], BeforeValidator(_listify)]
ImportLines = Annotated[tuple[Annotated[str, AfterValidator(_import_line)], ...], BeforeValidator(_listify)]
Decorators = Annotated[tuple[Annotated[str, AfterValidator(_decorator)], ...], BeforeValidator(_listify)]
ClassBases = Annotated[tuple[Annotated[str, AfterValidator(_base)], ...], BeforeValidator(_listify)]
ParameterKind = Annotated[
    Literal["positional_only", "positional", "var_positional", "keyword_only", "var_keyword"],
    BeforeValidator(_normalize_kind),
]
GlobalKind = Annotated[Literal["constant", "variable", "type_alias"], BeforeValidator(_normalize_kind)]
