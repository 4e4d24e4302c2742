"""Only `projectgen.runs` knows where a run folder's files are: everything else asks a layout (`RunLayout`,
`EvolveLayout`, ...; a `RunFolder` is one).

A path joined by hand (``out_dir / layout.USAGE``, ``run_dir / "usage.jsonl"``) is where a renamed file
is missed on one side; and the graphs, which runs/ builds on, do not reach back up into it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import projectgen
from projectgen.runs import layout

PACKAGE = Path(projectgen.__file__).parent
RUNS = PACKAGE / "runs"

# The names of a run folder's files (layout's first part); an experiment folder's (ledger, results) are not.
EXPERIMENT_NAMES = {"LEDGER", "EXPERIMENT_CONFIG", "RESULTS_JSON", "RESULTS_MD", "RESULTS_HTML", "TEST_REPORTS", "LOCK",
                    "BATCH_KIND"}
RUN_NAMES = {name for name, value in vars(layout).items()
             if name.isupper() and isinstance(value, str) and name not in EXPERIMENT_NAMES}
RUN_FILES = {getattr(layout, name) for name in RUN_NAMES}


def modules_outside_runs() -> list[Path]:
    return [path for path in sorted(PACKAGE.rglob("*.py"))
            if RUNS not in path.parents and "examples" not in path.relative_to(PACKAGE).parts]


def run_folder_joins(path: Path) -> list[str]:
    """Where `path` builds a run-folder path: ``X / layout.NAME``, ``X / NAME`` of a name the module is layout
    (or imported from it), or ``X / "run.json"``-like literals."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "projectgen.runs.layout" for alias in node.names}
    own = RUN_NAMES if path == RUNS / "layout.py" else imported & RUN_NAMES
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "layout" \
                and node.attr in RUN_NAMES:
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: layout.{node.attr}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and side.value in RUN_FILES:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: / {side.value!r}")
                if isinstance(side, ast.Name) and side.id in own:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: / {side.id}")
    return found


def test_the_check_knows_the_run_folder_names() -> None:
    """A check that knew no names, or that ignored a join, could not fail."""
    assert {"MANIFEST", "USAGE", "PROMPTS", "EVENTS", "CHECKPOINTS", "REPOSITORY", "ATTEMPTS"} <= RUN_NAMES
    assert run_folder_joins(RUNS / "layout.py"), "the layouts themselves join the names: the check must see that"


def test_no_module_outside_runs_builds_a_run_folder_path() -> None:
    joins = [join for path in modules_outside_runs() for join in run_folder_joins(path)]
    assert joins == [], "build run-folder paths with projectgen.runs.layout.RunLayout:\n" + "\n".join(joins)


def test_the_graphs_do_not_import_runs() -> None:
    """runs/ drives the graphs; a graph that imported runs/ would close a package cycle (an attempt's folder
    is written through the context's `record_attempt`, not by the graph)."""
    importing = []
    for path in sorted((PACKAGE / "graphs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            importing += [f"{path.name}: {name}" for name in names if name.startswith("projectgen.runs")]
    assert importing == []
