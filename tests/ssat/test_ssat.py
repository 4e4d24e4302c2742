"""SSAT: validation with readable errors, stub rendering that always compiles, derivation, diff."""
from __future__ import annotations

import ast
import copy
import inspect
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from projectgen.errors import ProjectGenError
from projectgen.ssat import (
    SSAT,
    FileNode,
    SSATValidationError,
    diff_ssat,
    render_diff,
    render_file,
    render_stub,
    render_tree,
    ssat_from_repository,
    unparsable_files,
    validate_ssat_json,
)

# --------------------------------------------------------------------------- builders


def kvstore() -> dict[str, Any]:
    """A small but complete SSAT, as a model would write it."""
    return {
        "project_name": "kvstore",
        "description": "A tiny persistent key-value store.",
        "modules": [{"path": "kvstore", "description": "The library package."}],
        "files": [
            {"path": "kvstore/__init__.py", "description": "Public API.", "dependencies": ["kvstore/store.py"]},
            {
                "path": "kvstore/errors.py",
                "description": "Exceptions.",
                "classes": [{"name": "KVError", "bases": ["Exception"], "description": "Base error."}],
            },
            {
                "path": "kvstore/store.py",
                "description": "The store.",
                "dependencies": ["kvstore/errors.py"],
                "imports": ["import json"],
                "globals": [{"name": "DEFAULT_PATH", "kind": "constant", "type": "str", "value": "'data.json'"}],
                "classes": [
                    {
                        "name": "KVStore",
                        "description": "Keeps keys in a JSON file.",
                        "attributes": [{"name": "path", "type": "str", "description": "Where data lives."}],
                        "methods": [
                            {
                                "name": "get",
                                "description": "Value for key, or default.",
                                "parameters": [
                                    {"name": "key", "type": "str"},
                                    {"name": "default", "type": "object", "default": "None"},
                                ],
                                "returns": "object",
                            },
                            {"name": "size", "decorators": ["property"], "returns": "int"},
                        ],
                    }
                ],
                "functions": [
                    {
                        "name": "open_store",
                        "parameters": [{"name": "path", "type": "str", "default": "DEFAULT_PATH"}],
                        "returns": "KVStore",
                    }
                ],
            },
            {"path": "README.md", "description": "How to use it."},
        ],
    }


def problems_of(data: Any) -> str:
    """The SSATValidationError message for invalid data (fails if it validates)."""
    with pytest.raises(SSATValidationError) as info:
        validate_ssat_json(data)
    return str(info.value)


def one_file(**fields: Any) -> dict[str, Any]:
    """An SSAT with a single file `m.py` holding `fields`."""
    return {"project_name": "p", "files": [{"path": "m.py", **fields}]}


def one_function(*params: Any, **fields: Any) -> dict[str, Any]:
    """An SSAT with one function `f` taking `params`."""
    return one_file(functions=[{"name": "f", "parameters": list(params), **fields}])


def compiles(code: str, path: str = "stub.py") -> str:
    """Compile or fail with the code shown."""
    try:
        compile(code, path, "exec", dont_inherit=True)
    except SyntaxError as exc:  # pragma: no cover - shown on failure only
        pytest.fail(f"{exc}\n{code}")
    return code


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    "path",
    ["../x.py", "/etc/x.py", "a/../../x.py", "C:\\x.py", "a\\..\\..\\x.py", "", ".git/hooks/pre-commit", "a\x00.py"],
)
def test_unsafe_paths_are_rejected(path: str) -> None:
    message = problems_of(one_file(path=path))
    assert "files[0].path" in message


@pytest.mark.parametrize("path", ["../x.py", "/etc/x.py"])
def test_unsafe_dependencies_are_rejected(path: str) -> None:
    assert "files[0].dependencies[0]" in problems_of(one_file(dependencies=[path]))


def test_paths_are_normalized() -> None:
    ssat = validate_ssat_json({"project_name": "p", "files": [{"path": "./pkg//a.py"}, {"path": "pkg\\b.py"}]})
    assert [f.path for f in ssat.files()] == ["pkg/a.py", "pkg/b.py"]
    assert ssat.file("pkg/./a.py").path == "pkg/a.py"
    with pytest.raises(KeyError):
        ssat.file("pkg/c.py")
    with pytest.raises(KeyError):
        ssat.file("../pkg/a.py")


# --------------------------------------------------------------------------- names and scopes


@pytest.mark.parametrize(
    ("data", "where", "what"),
    [
        (one_file(classes=[{"name": "1Store"}]), "files[0].classes[0].name", "not a valid Python identifier"),
        (one_file(functions=[{"name": "class"}]), "files[0].functions[0].name", "reserved Python word"),
        (one_function({"name": "a-b"}), "files[0].functions[0].parameters[0].name", "not a valid Python identifier"),
        (one_file(globals=[{"name": "None"}]), "files[0].globals[0].name", "reserved"),
        (one_file(classes=[{"name": "C", "attributes": [{"name": "my attr"}]}]), "attributes[0].name", "identifier"),
        (one_file(classes=[{"name": "C", "methods": [{"name": "__debug__"}]}]), "methods[0].name", "reserved"),
    ],
)
def test_bad_identifiers_are_rejected(data: dict[str, Any], where: str, what: str) -> None:
    message = problems_of(data)
    assert where in message and what in message


def test_duplicate_names_in_file_scope() -> None:
    message = problems_of(
        one_file(
            classes=[{"name": "Store"}],
            functions=[{"name": "Store"}, {"name": "load"}, {"name": "load"}],
            globals=[{"name": "load"}],
        )
    )
    assert "files[0] (m.py): file 'm.py': duplicate name 'Store' (defined as class and function)" in message
    assert "duplicate name 'load' (defined as global and function and function)" in message


def test_duplicate_names_in_class_scope() -> None:
    message = problems_of(
        one_file(classes=[{"name": "C", "attributes": [{"name": "size"}], "methods": [{"name": "size"}]}])
    )
    assert "files[0].classes[0] (m.py: C): class 'C': duplicate name 'size' (defined as attribute and method)" in message


def test_overloads_and_property_setters_may_reuse_a_name() -> None:
    methods = [
        {"name": "size", "decorators": ["property"]},
        {"name": "size", "decorators": ["size.setter"], "parameters": ["value: int"]},
        {"name": "get", "decorators": ["typing.overload"], "parameters": ["key: int"]},
        {"name": "get", "decorators": ["overload"], "parameters": ["key: str"]},
        {"name": "get", "parameters": ["key"]},
    ]
    imports = ["from typing import overload", "import typing"]
    ssat = validate_ssat_json(one_file(imports=imports, classes=[{"name": "C", "methods": methods}]))
    namespace: dict[str, Any] = {}
    exec(compiles(render_stub(ssat.file("m.py"))), namespace)
    assert isinstance(namespace["C"].size, property) and namespace["C"].size.fset is not None


def test_duplicate_files_and_cross_file_rules() -> None:
    assert "file 'a.py': a file cannot depend on itself" in problems_of(one_file(path="a.py", dependencies=["./a.py"]))
    data = {
        "project_name": "p",
        "modules": [{"path": "ghost"}],
        "files": [
            {"path": "a.py", "dependencies": ["missing.py"]},
            {"path": "./a.py"},
            {"path": "b.py"},
            {"path": "b.py/c.py"},
        ],
    }
    message = problems_of(data)
    assert "duplicate file path 'a.py'" in message
    assert "'b.py' is a file but also a folder of other files" in message
    assert "module 'ghost' has no files" in message
    assert "file 'a.py' depends on 'missing.py', which is not a file of the SSAT" in message
    assert "at least one file" in problems_of({"project_name": "p", "files": []})


def test_only_python_files_declare_code() -> None:
    assert "only .py files can declare" in problems_of(one_file(path="notes.md", classes=[{"name": "C"}]))
    ssat = validate_ssat_json(kvstore())
    assert render_stub(ssat.file("README.md")) == ""


# --------------------------------------------------------------------------- parameters and source text


@pytest.mark.parametrize(
    ("params", "what"),
    [
        ([{"name": "a", "default": "1"}, {"name": "b"}], "parameter 'b' has no default but follows 'a', which has one"),
        ([{"name": "a", "kind": "keyword_only"}, {"name": "b"}], "parameter 'b' (positional) cannot follow 'a' (keyword_only)"),
        ([{"name": "a", "kind": "var_keyword"}, {"name": "b", "kind": "keyword_only"}], "cannot follow 'a' (var_keyword)"),
        (["*a", "*b"], "at most one *args parameter allowed"),
        (["**a", "**b"], "at most one **kwargs parameter allowed"),
        ([{"name": "kw", "kind": "var_keyword", "default": "{}"}], "**kwargs parameter cannot have a default"),
        (["a", "a"], "duplicate parameter 'a'"),
        (["*"], "is a marker, not a parameter"),
        (["a, b"], "is not one parameter"),
    ],
)
def test_bad_parameter_lists_are_rejected(params: list[Any], what: str) -> None:
    message = problems_of(one_function(*params))
    assert what in message and "files[0].functions[0]" in message and "(m.py: f" in message


def test_keyword_only_parameters_may_mix_defaults() -> None:
    ssat = validate_ssat_json(
        one_function({"name": "a", "kind": "keyword_only", "default": "1"}, {"name": "b", "kind": "keyword_only"})
    )
    assert "def f(*, a=1, b):" in compiles(render_stub(ssat.file("m.py")))


def test_self_must_come_first_when_the_stub_adds_it() -> None:
    message = problems_of(one_file(classes=[{"name": "C", "methods": [{"name": "m", "parameters": ["x", "self"]}]}]))
    assert "method 'm': 'self' must be the first positional parameter" in message
    methods = [
        {"name": "register", "parameters": ["self", "cls"]},
        {"name": "s", "decorators": ["staticmethod"], "parameters": ["x", "self"]},
    ]
    ok = one_file(classes=[{"name": "C", "methods": methods}])
    compiles(render_stub(validate_ssat_json(ok).file("m.py")))


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("returns", "List[int", "not a valid Python expression"),
        ("returns", "await x", "await/yield are not allowed"),
        ("decorators", ["@"], "not a valid Python expression"),
    ],
)
def test_bad_source_text_is_rejected(field: str, value: Any, what: str) -> None:
    assert what in problems_of(one_file(functions=[{"name": "f", field: value}]))


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("from . import x", "relative imports are not allowed"),
        ("import os; import sys", "not a single"),
        ("x = 1", "not a single"),
        ("from __future__ import braces", "unknown __future__ feature"),
    ],
)
def test_bad_import_lines_are_rejected(line: str, what: str) -> None:
    assert what in problems_of(one_file(imports=[line]))


def test_class_bases_and_keywords() -> None:
    assert "given twice" in problems_of(one_file(classes=[{"name": "C", "bases": ["metaclass=A", "metaclass=B"]}]))
    assert "not a single class base" in problems_of(one_file(classes=[{"name": "C", "bases": ["A, B"]}]))
    ssat = validate_ssat_json(one_file(classes=[{"name": "C", "bases": ["metaclass=ABCMeta", "Base", "Generic[T]"]}]))
    assert "class C(Base, Generic[T], metaclass=ABCMeta):" in compiles(render_stub(ssat.file("m.py")))


def test_source_text_is_normalized_to_one_safe_line() -> None:
    ssat = validate_ssat_json(one_function({"name": "a", "type": "dict[str,\n int]", "default": "{}  # empty"}))
    param = ssat.file("m.py").functions[0].parameters[0]
    assert (param.type, param.default) == ("dict[str, int]", "{}")
    ssat = validate_ssat_json(one_function({"name": "a", "default": "1, 2"}))
    assert ssat.file("m.py").functions[0].parameters[0].default == "(1, 2)"


def test_model_slips_are_tolerated() -> None:
    data = one_file(
        description=None,
        classes=[
            {
                "name": "C",
                "bases": "Exception",
                "attributes": [{"name": "x", "default": "0"}],
                "methods": [
                    {
                        "name": "m",
                        "params": ["self", "key: str = 'a'", {"name": "*args"}, {"name": "flag", "kind": "Keyword-Only"}, "**kw"],
                        "return_type": "",
                        "decorators": ["@staticmethod"],
                    },
                ],
            }
        ],
        globals=[{"name": "Alias", "kind": "type alias", "value": "int | None", "type": ""}],
    )
    node = validate_ssat_json(data).file("m.py")
    method = node.classes[0].methods[0]
    assert [(p.name, p.kind) for p in method.parameters] == [
        ("self", "positional"), ("key", "positional"), ("args", "var_positional"), ("flag", "keyword_only"), ("kw", "var_keyword")
    ]
    assert method.parameters[1].default == "'a'" and method.returns is None and method.decorators == ("staticmethod",)
    assert node.classes[0].bases == ("Exception",) and node.classes[0].attributes[0].value == "0"
    assert node.globals[0].kind == "type_alias" and node.globals[0].type is None


# --------------------------------------------------------------------------- error messages


def test_error_message_lists_every_problem_with_its_location() -> None:
    data = kvstore()
    store = data["files"][2]
    store["classes"][0]["methods"][0]["parameters"].append({"name": "class"})
    store["functions"][0]["parameters"].append({"name": "mode"})
    store["classes"][0]["methodz"] = []
    data["files"][1]["path"] = "../errors.py"
    message = problems_of(data)
    lines = message.splitlines()
    assert lines[0] == "invalid SSAT:"
    assert "- files[1].path (../errors.py): unsafe repository path '../errors.py': must stay inside the repository" in lines
    assert (
        "- files[2].classes[0].methods[0].parameters[2].name (kvstore/store.py: KVStore.get(class)): "
        "'class' is a reserved Python word and cannot be used as a name"
    ) in lines
    assert (
        "- files[2].classes[0].methodz (kvstore/store.py: KVStore): unknown field 'methodz' "
        "(allowed: name, bases, description, decorators, attributes, methods)"
    ) in lines
    assert (
        "- files[2].functions[0] (kvstore/store.py: open_store): open_store(): parameter 'mode' has no default "
        "but follows 'path', which has one"
    ) in lines
    assert isinstance(SSATValidationError(["x"]), ProjectGenError)


def test_error_message_for_wrong_types_and_missing_fields() -> None:
    message = problems_of({"project_name": "p", "files": [{"functions": [{"name": "f", "is_async": "maybe"}]}]})
    assert "- files[0].path: missing required field" in message
    assert "files[0].functions[0].is_async (f): Input should be a valid boolean" in message and "(got 'maybe')" in message


def test_json_text_is_parsed_tolerantly() -> None:
    text = json.dumps(kvstore())
    wrapped = f"Here is the architecture:\n```json\n{text}\n```\nDone."
    assert validate_ssat_json(wrapped) == validate_ssat_json(text) == validate_ssat_json(f"Sure! {text} Hope it helps.")
    assert "Invalid JSON at line 1" in problems_of('{"project_name": "p", "files": [}')
    cut = json.dumps(kvstore())[:-40]
    assert "the JSON is cut off" in problems_of(cut)
    two_files = json.dumps({"project_name": "p", "files": [{"path": "a.py"}, {"path": "b.py"}]})
    assert "the JSON is cut off" in problems_of(two_files[:-5])
    assert "must be a JSON object" in problems_of("[1, 2]")


# --------------------------------------------------------------------------- rendering


def test_full_round_trip_via_json() -> None:
    ssat = validate_ssat_json(kvstore())
    dumped = ssat.model_dump_json()
    assert json.loads(dumped)["files"][0]["path"] == "kvstore/__init__.py"
    again = validate_ssat_json(dumped)
    assert again == ssat
    assert [render_stub(f) for f in again.files()] == [render_stub(f) for f in ssat.files()]
    assert [f.path for f in ssat.files()] == ["README.md", "kvstore/__init__.py", "kvstore/errors.py", "kvstore/store.py"]
    assert "files" in SSAT.model_json_schema()["properties"]


def test_stub_of_a_typical_file() -> None:
    stub = render_stub(validate_ssat_json(kvstore()).file("kvstore/store.py"))
    assert stub == textwrap.dedent(
        '''\
        """The store."""
        from __future__ import annotations

        import json
        from kvstore import errors

        DEFAULT_PATH: str = 'data.json'


        class KVStore:
            """Keeps keys in a JSON file."""

            # Where data lives.
            path: str

            def get(self, key: str, default: object = None) -> object:
                """Value for key, or default."""
                pass

            @property
            def size(self) -> int:
                pass


        def open_store(path: str = DEFAULT_PATH) -> KVStore:
            pass
        '''
    )


TRICKY_TEXT = (
    'Ends with a quote "x"\nHas """triple""" and \'\'\' quotes, a back\\slash\\, \\N{BULLET},'
    ' a NUL \x00,\r\nCR, tab\t, a \u2028 line sep."'
)


def tricky_ssat() -> dict[str, Any]:
    """Every feature the stub renderer handles, with hostile descriptions."""
    method_params = [
        {"name": "a", "kind": "positional_only"},
        {"name": "b", "type": "int", "default": "1", "kind": "positional_only"},
        {"name": "c", "type": "str | None", "default": "None"},
        {"name": "args", "type": "Any", "kind": "var_positional"},
        {"name": "d", "kind": "keyword_only"},
        {"name": "e", "type": "float", "default": "0.5", "kind": "keyword_only"},
        {"name": "kwargs", "type": "Any", "kind": "var_keyword"},
    ]
    return {
        "project_name": "tricky",
        "description": TRICKY_TEXT,
        "files": [
            {"path": "src/pkg/__init__.py"},
            {"path": "src/pkg/a/utils.py"},
            {"path": "src/pkg/b/utils.py"},
            {"path": "tools/run-demo.py"},
            {"path": "config.json"},
            {
                "path": "src/pkg/core.py",
                "description": TRICKY_TEXT,
                "dependencies": [
                    "src/pkg/__init__.py", "src/pkg/a/utils.py", "src/pkg/b/utils.py", "tools/run-demo.py", "config.json"
                ],
                "imports": [
                    "from __future__ import annotations, division", "import os.path as osp", "from typing import Any, overload"
                ],
                "globals": [
                    {"name": "LIMIT", "kind": "constant", "type": "int", "value": "10", "description": TRICKY_TEXT},
                    {"name": "cache", "type": "dict[str, int]"},
                    {"name": "pending"},
                    {"name": "Pair", "kind": "type_alias", "value": "tuple[Node, Node]"},
                ],
                "classes": [
                    {"name": "Empty"},
                    {
                        "name": "Node",
                        "bases": ["metaclass=type", "object"],
                        "decorators": ["functools.total_ordering"],
                        "description": TRICKY_TEXT,
                        "attributes": [{"name": "x", "type": "int"}, {"name": "y", "value": "0"}, {"name": "z"}],
                        "methods": [
                            {"name": "everything", "parameters": method_params, "returns": "None", "description": TRICKY_TEXT},
                            {"name": "fetch", "is_async": True, "decorators": ["staticmethod"], "parameters": ["url: str"]},
                            {"name": "make", "decorators": ["classmethod", "functools.lru_cache(maxsize=None)"]},
                            {"name": "__new__", "parameters": ["*args"]},
                            {"name": "value", "decorators": ["property"], "returns": "'Node'"},
                            {"name": "value", "decorators": ["value.setter"], "parameters": ["v"]},
                            {"name": "lam", "parameters": [{"name": "f", "default": "lambda x: x + 1"}]},
                        ],
                    },
                ],
                "functions": [
                    {"name": "run", "is_async": True, "parameters": method_params, "description": "Run."},
                    {"name": "only_kw", "parameters": [{"name": "k", "kind": "keyword_only", "default": "{'a': [1, 2]}"}]},
                    {"name": "only_star", "parameters": ["*rest", "**opts"]},
                    {"name": "match", "parameters": ["type", "case", "_"]},
                ],
            },
        ],
    }


def test_stub_with_every_feature_compiles_and_keeps_text() -> None:
    ssat = validate_ssat_json(tricky_ssat())
    for node in ssat.files():
        compiles(render_stub(node), node.path)
    stub = render_stub(ssat.file("src/pkg/core.py"))
    tree = ast.parse(stub)
    expected = inspect.cleandoc(TRICKY_TEXT.replace("\r\n", "\n"))
    assert ast.get_docstring(tree) == expected
    node_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Node")
    assert ast.get_docstring(node_class) == expected
    assert stub.startswith('"""Ends with a quote "x"\n')
    assert "from __future__ import annotations, division\n" in stub
    assert "import pkg\nfrom pkg.a import utils as pkg_a_utils\nfrom pkg.b import utils as pkg_b_utils\n" in stub
    assert "run-demo" not in stub and "config.json" not in stub
    assert (
        "def everything(self, a, b: int = 1, /, c: str | None = None, *args: Any, d, e: float = 0.5, **kwargs: Any) -> None:"
    ) in stub
    assert "    async def fetch(url: str):" in stub
    assert "    @classmethod\n    @functools.lru_cache(maxsize=None)\n    def make(cls):" in stub
    assert "    def __new__(cls, *args):" in stub
    assert "async def run(a, b: int = 1, /, c" in stub and "def only_kw(*, k={'a': [1, 2]}):" in stub
    assert "def only_star(*rest, **opts):" in stub and "def match(type, case, _):" in stub
    assert "class Empty:\n    pass\n" in stub
    assert "    x: int\n    y = 0\n    z = None\n" in stub
    assert "cache: dict[str, int] = None\npending = None\n" in stub
    assert stub.index("class Node") < stub.index("Pair = tuple[Node, Node]") < stub.index("async def run")


def test_stub_rendering_is_deterministic() -> None:
    first = validate_ssat_json(tricky_ssat())
    second = validate_ssat_json(json.loads(first.model_dump_json()))
    assert [render_stub(f).encode() for f in first.files()] == [render_stub(f).encode() for f in second.files()]
    assert render_tree(first) == render_tree(second)


def test_simple_stub_is_importable() -> None:
    data = one_file(
        description="Shapes.",
        globals=[{"name": "UNIT", "type": "Length", "value": "1.0"}],
        classes=[
            {
                "name": "Shape",
                "attributes": [{"name": "sides", "type": "int", "value": "0"}],
                "methods": [
                    {"name": "area", "returns": "Length"},
                    {"name": "build", "decorators": ["classmethod"], "returns": "Shape"},
                ],
            },
            {"name": "Square", "bases": ["Shape"], "methods": [{"name": "side", "decorators": ["property"]}]},
        ],
        functions=[{"name": "scale", "parameters": ["s: Shape", "f: float = UNIT"], "is_async": True}],
    )
    namespace: dict[str, Any] = {}
    exec(compiles(render_stub(validate_ssat_json(data).file("m.py"))), namespace)
    assert namespace["__doc__"] == "Shapes." and namespace["Square"]().area() is None
    assert namespace["Shape"].build() is None and namespace["UNIT"] == 1.0


def test_empty_python_file_renders_empty() -> None:
    ssat = validate_ssat_json(one_file())
    assert render_stub(ssat.file("m.py")) == ""
    stub = render_stub(FileNode(path="pkg/__init__.py", description="Package."))
    assert stub == '"""Package."""\nfrom __future__ import annotations\n'


def test_render_tree_is_one_line_per_item() -> None:
    tree = render_tree(validate_ssat_json(kvstore()))
    assert tree.splitlines() == [
        "Project kvstore: A tiny persistent key-value store.",
        "package kvstore/: The library package.",
        "README.md: How to use it.",
        "kvstore/__init__.py: Public API. [uses kvstore/store.py]",
        "kvstore/errors.py: Exceptions.",
        "  class KVError(Exception)",
        "kvstore/store.py: The store. [uses kvstore/errors.py]",
        "  DEFAULT_PATH: str",
        "  class KVStore",
        "    path: str",
        "    def get(self, key: str, default: object = None) -> object",
        "    @property def size(self) -> int",
        "  def open_store(path: str = DEFAULT_PATH) -> KVStore",
    ]


def test_render_file_has_descriptions_and_neighbours() -> None:
    text = render_file(validate_ssat_json(kvstore()), "kvstore/store.py")
    for expected in (
        "File kvstore/store.py",
        "Description: The store.",
        "  - kvstore/errors.py: Exceptions.",
        "Used by: kvstore/__init__.py",
        "Imports: import json",
        "  - DEFAULT_PATH: str = 'data.json' (constant)",
        "class KVStore:",
        "    Keeps keys in a JSON file.",
        "  - attribute path: str: Where data lives.",
        "  - def get(self, key: str, default: object = None) -> object",
        "      Value for key, or default.",
        "Functions:",
    ):
        assert expected in text.splitlines(), expected


# --------------------------------------------------------------------------- derivation from source

SMALL_REPO = {
    "pkg/__init__.py": (
        '"""The package.\n\nMore text."""\nfrom .core import Engine, run\nfrom . import util\n\n__all__ = ["Engine", "run"]\n'
    ),
    "pkg/core.py": textwrap.dedent(
        '''\
        """Core engine."""
        from __future__ import annotations

        import os
        from typing import Any, overload

        from pkg.util import helper

        LIMIT: int = 10
        name = "core"
        a, b = 1, 2


        class Base:
            pass


        class Engine(Base, metaclass=type):
            """Runs things.

            Details here.
            """

            speed: float = 1.0
            label = "engine"

            def __init__(self, speed: float = 1.0, *, label: str = "x") -> None:
                """Make one."""
                self.speed = speed

            @property
            def fast(self) -> bool:
                return self.speed > 1

            @fast.setter
            def fast(self, value: bool) -> None:
                self.speed = 2.0 if value else 1.0

            @staticmethod
            async def fetch(url: str, /, timeout: float = 1.0, *args: Any, **kwargs: Any) -> bytes:
                return b""

            @classmethod
            def create(cls) -> "Engine":
                return cls()

            def inner(self):
                def nested():
                    pass
                return nested


        @overload
        def run(x: int) -> int: ...
        @overload
        def run(x: str) -> str: ...
        def run(x):
            """Run x."""
            from pkg import util
            return x


        if os.name == "nt":
            def platform() -> str:
                return "win"
        else:
            def platform() -> str:
                return "posix"

        if __name__ == "__main__":
            MAIN_ONLY = 1
        '''
    ),
    "pkg/util.py": 'def helper(*items, sep=", "):\n    return sep.join(items)\n',
    "pkg/broken.py": "def oops(:\n",
    "README.md": "# not python\n",
}


def test_ssat_from_repository_on_a_small_repo() -> None:
    ssat = ssat_from_repository(SMALL_REPO, "small")
    assert [f.path for f in ssat.files()] == ["pkg/__init__.py", "pkg/core.py", "pkg/util.py"]
    assert unparsable_files(SMALL_REPO) == ["pkg/broken.py"]
    assert [(m.path, m.description) for m in ssat.modules] == [("pkg", "The package.")]
    init, core, util = ssat.files()
    assert init.dependencies == ("pkg/core.py", "pkg/util.py")
    assert init.imports == ("from pkg.core import Engine, run", "from pkg import util")
    assert core.description == "Core engine." and core.dependencies == ("pkg/util.py",)
    assert core.imports == ("import os", "from typing import Any, overload", "from pkg.util import helper")
    assert [(g.name, g.kind, g.type, g.value) for g in core.globals] == [
        ("LIMIT", "constant", "int", "10"), ("name", "variable", None, "'core'"), ("a", "variable", None, "1"), ("b", "variable", None, "2")
    ]
    assert [c.name for c in core.classes] == ["Base", "Engine"]
    engine = core.classes[1]
    assert engine.bases == ("Base", "metaclass=type") and engine.description == "Runs things."
    assert [(a.name, a.type, a.value) for a in engine.attributes] == [("speed", "float", "1.0"), ("label", None, "'engine'")]
    assert [m.name for m in engine.methods] == ["__init__", "fast", "fast", "fetch", "create", "inner"]
    fetch = engine.methods[3]
    assert fetch.is_async and fetch.decorators == ("staticmethod",) and fetch.returns == "bytes"
    assert [(p.name, p.kind, p.default) for p in fetch.parameters] == [
        ("url", "positional_only", None), ("timeout", "positional", "1.0"), ("args", "var_positional", None), ("kwargs", "var_keyword", None)
    ]
    assert [f.name for f in core.functions] == ["run", "run", "run", "platform"]
    assert "MAIN_ONLY" not in {g.name for g in core.globals}
    assert util.functions[0].parameters[1].default == "', '"
    for node in ssat.files():
        stub = compiles(render_stub(node), node.path)
        assert stub == render_stub(node)


def test_stubs_of_a_derived_ssat_derive_the_same_ssat() -> None:
    repo = {k: v for k, v in SMALL_REPO.items() if k.endswith(".py") and k != "pkg/broken.py"}
    first = ssat_from_repository(repo, "small")
    second = ssat_from_repository({f.path: render_stub(f) for f in first.files()}, "small")
    assert diff_ssat(first, second) == {}


# --------------------------------------------------------------------------- diff


def test_diff_names_the_changed_function() -> None:
    old = validate_ssat_json(kvstore())
    data = copy.deepcopy(kvstore())
    store = data["files"][2]
    store["classes"][0]["methods"][0]["returns"] = "str"
    store["classes"][0]["methods"].pop()
    store["functions"].append({"name": "close_store"})
    store["dependencies"] = []
    data["files"].append({"path": "kvstore/cli.py", "description": "CLI."})
    diff = diff_ssat(old, validate_ssat_json(data))
    get = "root['files']['kvstore/store.py']['classes']['KVStore']['methods']['get']"
    assert diff["values_changed"][f"{get}['signature']"] == {
        "old_value": "def get(self, key: str, default: object = None) -> object",
        "new_value": "def get(self, key: str, default: object = None) -> str",
    }
    assert diff["dictionary_item_added"] == [
        "root['files']['kvstore/cli.py']",
        "root['files']['kvstore/store.py']['functions']['close_store']",
    ]
    assert diff["dictionary_item_removed"] == [get.replace("'get'", "'size'")]
    json.dumps(diff)  # plain data: fits in graph state
    text = render_diff(diff)
    assert text.splitlines() == [
        "+ file kvstore/cli.py",
        "+ function kvstore/store.py: close_store",
        "- dependency of kvstore/store.py: kvstore/errors.py",
        "- method kvstore/store.py: KVStore.size",
        "~ kvstore/store.py: KVStore.get signature: 'def get(self, key: str, default: object = None) -> object'"
        " -> 'def get(self, key: str, default: object = None) -> str'",
    ]
    assert render_diff(diff, max_lines=2).splitlines() == ["+ file kvstore/cli.py", "... and 4 more changes"]
    assert diff_ssat(old, old) == {} and render_diff({}) == "no changes"


# --------------------------------------------------------------------------- benchmark data


DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def top_level_names(text: str) -> set[str]:
    """Classes and functions at module level (inside if/try too) and the methods of those classes."""
    names: set[str] = set()
    todo = list(ast.parse(text).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        elif isinstance(node, DEFS):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names |= {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names


@pytest.mark.datasets
@pytest.mark.parametrize("project", ["tinydb", "deprecated"])
def test_ssat_from_benchmark_repository(shared_datasets: Path, project: str) -> None:
    root = shared_datasets / "CodeProjectEval" / project
    if not (root / project).is_dir():
        pytest.skip(f"{root / project} not found")
    sources = sorted((root / project).glob("*.py"))
    repo = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sources}
    ssat = ssat_from_repository(repo, project)
    assert unparsable_files(repo) == []
    assert validate_ssat_json(ssat.model_dump_json()) == ssat
    assert {f.path for f in ssat.files()} == set(repo)
    for node in ssat.files():
        stub = compiles(render_stub(node), node.path)
        defined = {n.name for n in ast.walk(ast.parse(stub)) if isinstance(n, DEFS)}
        missing = top_level_names(repo[node.path]) - defined
        assert not missing, f"{node.path}: {sorted(missing)}"
    tree = render_tree(ssat)
    assert len(tree) < sum(map(len, repo.values())) / 3
    if project == "tinydb":
        assert ssat.file("tinydb/database.py").dependencies == (
            "tinydb/__init__.py", "tinydb/storages.py", "tinydb/table.py", "tinydb/utils.py"
        )
