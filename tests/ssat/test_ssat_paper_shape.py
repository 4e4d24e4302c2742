"""The SSAT as the ProjectGen paper prints it loads, renders and round-trips; older trees still load.

The paper's tree (its architecture prompt's target format: Module -> File -> GlobalCode, Class ->
Function, Function; parameters as name / type / description) is written here by hand for a small
to-do application, in that shape: a bare list of logical modules, each nesting its file objects.
"""
from __future__ import annotations

import copy
import json

import pytest

import projectgen
from projectgen.llm.scripted import load_script
from projectgen.oracles.reference_replay import reference_ssat
from projectgen.ssat import SSAT, SSATValidationError, diff_ssat, render_diff, render_file, render_stub, render_tree
from projectgen.ssat import validate_ssat_json

PAPER_SSAT = [
    {
        "name": "Storage",
        "description": "Keeps the to-do items on disk",
        "files": [
            {
                "name": "store.py",
                "path": "todo/store.py",
                "description": "JSON file storage of the items",
                "global_code": [
                    {"name": "DEFAULT_PATH", "description": "Where the items are kept unless told otherwise"},
                ],
                "classes": [
                    {
                        "name": "TodoStore",
                        "description": "Loads and saves the items",
                        "functions": [
                            {"name": "__init__", "description": "Opens the store",
                             "parameters": [{"name": "path", "type": "str",
                                             "description": "the JSON file; default DEFAULT_PATH"}]},
                            {"name": "add", "description": "Adds an item and returns its id",
                             "parameters": [{"name": "title", "type": "str", "description": "what to do"},
                                            {"name": "due", "type": "str | None", "description": "ISO date"}]},
                        ],
                    }
                ],
                "functions": [],
            }
        ],
    },
    {
        "name": "Interface",
        "description": "The command line",
        "files": [
            {
                "name": "cli.py",
                "path": "todo/cli.py",
                "description": "Parses the arguments and calls the store",
                "global_code": [{"name": "PARSER", "description": "The argument parser, built at import"}],
                "functions": [
                    {"name": "main", "description": "Runs one command",
                     "parameters": [{"name": "argv", "type": "list[str] | None",
                                     "description": "the arguments; None reads sys.argv"}]},
                ],
            },
            {"name": "__init__.py", "path": "todo/__init__.py", "description": "The package"},
        ],
    },
]


@pytest.fixture
def paper() -> SSAT:
    return validate_ssat_json(copy.deepcopy(PAPER_SSAT), project_name="todo")


def test_a_paper_shaped_tree_loads_with_its_modules_descriptions_and_global_code(paper: SSAT) -> None:
    assert paper.project_name == "todo"
    assert [(m.name, m.path, m.files) for m in paper.modules] == [
        ("Storage", None, ("todo/store.py",)), ("Interface", None, ("todo/cli.py", "todo/__init__.py"))]
    store = paper.file("todo/store.py")
    assert [(g.name, g.description) for g in store.globals] == [
        ("DEFAULT_PATH", "Where the items are kept unless told otherwise")]
    add = store.classes[0].methods[1]  # the paper's class "functions" are methods
    assert [(p.name, p.type, p.description) for p in add.parameters] == [
        ("title", "str", "what to do"), ("due", "str | None", "ISO date")]
    assert paper.file("todo/cli.py").globals[0].name == "PARSER"


def test_a_paper_shaped_tree_round_trips(paper: SSAT) -> None:
    dumped = paper.model_dump(mode="json")
    assert SSAT.model_validate(dumped) == paper
    assert validate_ssat_json(paper.model_dump_json()) == paper
    assert SSAT.model_validate(json.loads(json.dumps(dumped))).model_dump(mode="json") == dumped
    # the flat shape keeps what the paper's nesting said: each module names its files
    assert dumped["modules"][0] == {"name": "Storage", "path": None, "description": "Keeps the to-do items on disk",
                                    "files": ["todo/store.py"]}


def test_rendering_shows_modules_and_parameter_descriptions(paper: SSAT) -> None:
    stub = render_stub(paper.file("todo/store.py"))
    compile(stub, "todo/store.py", "exec")
    assert '        """Adds an item and returns its id\n\n        Args:\n            title: what to do\n' in stub
    assert "DEFAULT_PATH = None" in stub
    tree = render_tree(paper)
    assert "module Interface: The command line [files todo/cli.py, todo/__init__.py]" in tree
    view = render_file(paper, "todo/cli.py")
    assert "Module: Interface: The command line" in view
    assert "argv: the arguments; None reads sys.argv" in view


def test_diff_names_parameter_descriptions_and_module_membership(paper: SSAT) -> None:
    changed = copy.deepcopy(PAPER_SSAT)
    changed[0]["files"][0]["classes"][0]["functions"][1]["parameters"][0]["description"] = "the item's text"
    changed[1]["files"] = changed[1]["files"][:1]
    changed[0]["files"].append({"path": "todo/__init__.py", "description": "The package"})
    lines = render_diff(diff_ssat(paper, validate_ssat_json(changed, project_name="todo"))).splitlines()
    assert "+ file of Storage: todo/__init__.py" in lines and "- file of Interface: todo/__init__.py" in lines
    assert "~ todo/store.py: TodoStore.add parameters title: 'what to do' -> \"the item's text\"" in lines


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda t: t[0].update(files=[*t[0]["files"], "todo/ghost.py"]),
     "module 'Storage' lists 'todo/ghost.py', which is not a file of the SSAT"),
    (lambda t: t[1].update(files=[*t[1]["files"], "todo/store.py"]),
     "file 'todo/store.py' is in more than one module (Storage, Interface)"),
    (lambda t: t[0]["files"][0].update(name="storage.py"),
     "file name 'storage.py' is not the last part of its path 'todo/store.py'"),
    (lambda t: t[0].pop("name"), "a module needs a name (and its files) or a folder path"),
])
def test_a_wrong_paper_tree_is_refused_with_the_reason(mutate, message) -> None:
    tree = copy.deepcopy(PAPER_SSAT)
    mutate(tree)
    with pytest.raises(SSATValidationError) as caught:
        validate_ssat_json(tree, project_name="todo")
    assert any(message in problem for problem in caught.value.problems), caught.value.problems


def test_a_bare_list_needs_a_project_name() -> None:
    with pytest.raises(SSATValidationError, match="a list of modules without a project name"):
        validate_ssat_json(copy.deepcopy(PAPER_SSAT))


OLDER_TREE = {  # the shape run folders and checkpoints hold from before logical modules
    "project_name": "kv", "description": "",
    "modules": [{"path": "kv", "description": "The package."}],
    "files": [{"path": "kv/__init__.py", "description": "", "dependencies": [], "imports": [], "globals": [],
               "classes": [], "functions": [{"name": "get", "description": "", "parameters": [
                   {"name": "key", "type": "str", "default": None, "kind": "positional"}],
                   "returns": None, "is_async": False, "decorators": []}]}],
}


def test_older_trees_still_load() -> None:
    old = SSAT.model_validate(OLDER_TREE)
    assert [(m.name, m.path, m.files) for m in old.modules] == [("kv", "kv", ())]
    assert "package kv/: The package." in render_tree(old)
    assert SSAT.model_validate(old.model_dump(mode="json")) == old


@pytest.mark.parametrize("script", ["kvstore.demo", "kvstore.evolve1", "kvstore.evolve2", "kvstore.evolve3",
                                    "kvstore.evolve4"])
def test_bundled_scripts_trees_still_load(script: str) -> None:
    replies = [entry.text for entry in load_script(projectgen.example_script_path(script)).responses
               if entry.role == "architect"]
    assert replies
    for reply in replies:
        tree = validate_ssat_json(reply)
        assert SSAT.model_validate(tree.model_dump(mode="json")) == tree


def test_the_reference_oracles_tree_still_loads() -> None:
    task = projectgen.load_task(projectgen.example_task_path("kvstore"))
    tree = reference_ssat(task)
    assert tree.modules and all(m.path and m.name == m.path.rsplit("/", 1)[-1] for m in tree.modules)
    assert validate_ssat_json(tree.model_dump_json()) == tree
