"""A custom ProjectGen graph built from `projectgen.graphs` building blocks.

    python examples/custom_graph.py [--out DIR]

The default pipeline is architecture -> skeleton -> code. This one:

- drops the skeleton stage: the code stage then starts from stubs rendered from the
  architecture tree (SSAT) instead of written skeletons;
- adds a lint judge to the code stage, next to the code judge (which runs the check
  tests). Both must accept; the files a judge names are sent back to the coder.

It runs offline on the bundled `kvstore` task. The "model" is a scripted replay of the
task's reference code, not a real model: it answers every call from the reference, except
that the first version of `kvstore/cli.py` carries an unused import. The lint judge flags
it, the coder's (replayed) repair removes it, and the second round is accepted. To use a
real model, pass e.g. ``ModelRoles.from_specs("openai:gpt-4o-mini")`` to `build_graph`.
"""
from __future__ import annotations

import argparse
import ast
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from projectgen import load_task
from projectgen.agents import Agents, Verdict
from projectgen.config import Settings
from projectgen.datasets.examples import example_task_path
from projectgen.errors import ProjectGenError
from projectgen.graphs import architecture_stage, build_project_graph, code_stage
from projectgen.llm import Script, ScriptedChatModel, load_script
from projectgen.oracles.reference_replay import reference_python_files, reference_script
from projectgen.repository.edits import make_whole_file_reply
from projectgen.runs import run_project


# --------------------------------------------------------------------------- the extra judge

def _annotation_names(tree: ast.Module) -> set[str]:
    """Names used inside string annotations such as ``x: "Sequence[int]"``."""
    names: set[str] = set()
    annotations = [n.annotation for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.AnnAssign))]
    annotations += [n.returns for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for annotation in filter(None, annotations):
        for node in ast.walk(annotation):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    names |= {n.id for n in ast.walk(ast.parse(node.value, mode="eval")) if isinstance(n, ast.Name)}
                except SyntaxError:
                    pass
    return names


def _exported_names(tree: ast.Module) -> set[str]:
    """The string entries of a module-level ``__all__ = [...]``."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return {e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def lint_problems(path: str, code: str) -> list[str]:
    """Bare ``except:`` clauses, wildcard imports and unused imports in one file, one line each.

    Imports in ``__init__.py`` files are re-exports and are not checked for use."""
    try:
        tree = ast.parse(code, filename=path)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: the file does not parse ({exc.msg})"]
    problems: list[tuple[int, str]] = []
    imported: dict[str, int] = {}
    check_unused = not path.endswith("__init__.py")  # an __init__'s imports are its exports
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            problems.append((node.lineno, "bare `except:`; catch `Exception` or a narrower error"))
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            problems.append((node.lineno, f"wildcard import `from {node.module} import *`; import the names used"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and check_unused \
                and getattr(node, "module", None) != "__future__":
            for alias in node.names:
                imported.setdefault(alias.asname or alias.name.split(".")[0], node.lineno)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | _annotation_names(tree) | _exported_names(tree)
    for name, line in imported.items():
        if name not in used:
            problems.append((line, f"`{name}` is imported but never used; remove the import"))
    return [f"line {line}: {text}" for line, text in sorted(problems)]


class LintJudge:
    """A code-stage judge without a model: accepts when no Python file has a lint problem."""

    name = "lint"

    async def review(self, gateway: Any, task: Any, repository: Mapping[str, str], *, runner: Any,
                     iteration: int) -> Verdict:
        files: dict[str, str] = {}  # path -> what to change; the code stage repairs exactly these files
        count = 0
        for path, code in sorted(repository.items()):
            problems = lint_problems(path, code) if path.endswith(".py") else []
            if problems:
                files[path] = "\n".join(problems)
                count += len(problems)
        feedback = (f"{count} lint problem(s) in {', '.join(files)}" if files else "no lint problems")
        return Verdict(judge=self.name, stage="code", iteration=iteration, score=max(0, 10 - count),
                       accepted=not files, feedback=feedback, files=files)


# --------------------------------------------------------------------------- the graph

def build_graph(models: Any, settings: Settings):
    """Architecture stage, then a code stage judged by the code judge and the lint judge."""
    agents = Agents.from_models(models)
    return build_project_graph(stages=[
        ("architecture", architecture_stage(agents.architect, agents.architecture_judge, settings)),
        ("code", code_stage(agents.coder, [agents.code_judge, LintJudge()], settings)),
    ])


# --------------------------------------------------------------------------- the offline replay

LINT_DEMO_FILE = "kvstore/cli.py"


def replay_script(task: Any) -> Script:
    """The reference replay, with an unused import in round 1 of `LINT_DEMO_FILE` and its repair in round 2."""
    reference = reference_python_files(task)
    responses = [entry.model_dump(exclude_none=True) for entry in reference_script(task).responses]
    untidy = reference[LINT_DEMO_FILE].replace("import sys\n", "import sys\nimport os\n", 1)
    for entry in responses:
        if entry["role"] == "coder" and entry.get("target") == LINT_DEMO_FILE:
            entry.update(iteration=1, content=f"```python\n{untidy}```\n")
    responses.append({"role": "coder", "target": LINT_DEMO_FILE, "iteration": 2,
                      "content": make_whole_file_reply([LINT_DEMO_FILE], reference)})
    return load_script({"label": "reference replay of kvstore with a lint repair (not a model)",
                        "responses": responses})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="output folder (default: a new temporary folder)")
    parser.add_argument("--force", action="store_true", help="replace an earlier run's outputs in --out")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="projectgen-custom-graph-"))

    task = load_task(example_task_path("kvstore"))
    script = replay_script(task)
    model = ScriptedChatModel(script=script, label=script.label)
    print(f"model: scripted replay ({model.label}) -- NOT a real model; answers come from reference code")
    print("graph: architecture -> code (no skeleton stage); code judges: code_judge + lint")

    settings = Settings()
    try:
        outcome = run_project(task, graph=build_graph(model, settings), settings=settings, out_dir=out,
                              force=args.force, progress=lambda message: print(f"  . {message}"))
    except ProjectGenError as exc:  # e.g. a non-empty --out without --force
        print(f"error: {exc}", file=sys.stderr)
        return 2

    print("\nstages:")
    for stage, summary in outcome.summary.stages.items():
        status = "accepted" if summary.accepted else "not accepted"
        print(f"  {stage}: {summary.iterations} iteration(s), {status}, scores {summary.scores}")
    for record in outcome.state.get("verdicts") or []:
        if record["stage"] == "code":
            scores = ", ".join(f"{judge} {score:g}" for judge, score in record["scores"].items())
            print(f"  code round {record['iteration']}: {scores} -> {'accepted' if record['accepted'] else 'revise'}")
            for line in filter(None, record["feedback"].splitlines()):
                print(f"    {line}")
            for path, suggestion in record["files"].items():
                print(f"    fix {path}: {suggestion}")
    report = outcome.unit_report
    if report is not None:
        print(f"\nhidden unit tests: {report.passed}/{report.total} passed ({report.status})")
    print(f"outputs: {out}")
    green = (outcome.summary.stages.get("code") is not None and outcome.summary.stages["code"].accepted
             and report is not None and report.total > 0 and report.passed == report.total)
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())
