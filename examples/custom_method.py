"""Your own method and scorer as arms of an experiment, beside the built-in ones.

    python examples/custom_method.py [--out DIR] [--fresh]

or, from the repository's root, the same through the CLI (the module form; a path works too,
``--method examples/custom_method.py:design_then_code``):

    projectgen experiment --dataset examples --tasks wordfreq --model reference \\
        --method projectgen,examples.custom_method:design_then_code \\
        --scorer examples.custom_method:docstring_coverage --out runs/custom-method

- `design_then_code` returns the method ``design-then-code``: ProjectGen's architecture stage, then its
  code stage straight from the design (no skeleton stage: the coder starts from stubs rendered from the
  architecture tree). Its graph factory is called as the built-in inner graphs are, with the run's
  agents, settings and models; everything else is the run of its base method (``projectgen``, one
  attempt): run folder, checkpoints and resume, trace, the hidden unit tests in the sandbox.
- `docstring_coverage` returns the scorer ``docstrings``: the share (0-100) of the output's public
  functions and classes that have a docstring. It parses the files and never runs them; a scorer that
  runs generated code must do it through the sandbox runner it is given (docs/sandbox.md).

It runs offline: ``--model reference`` is a scripted replay of each task's reference code (an oracle,
NOT a real model), so both arms score full marks on the unit tests and the point is the plumbing. Use
e.g. ``--model openai:gpt-4o-mini`` for a real comparison. experiment.json records each factory's spec
and the hash of its file: continuing the folder after editing this file is refused (use --fresh, or
another --out).
"""
from __future__ import annotations

import argparse
import ast
import sys
import tempfile
from pathlib import Path
from typing import Any

from projectgen.config import Settings
from projectgen.datasets.examples import example_tasks_dir
from projectgen.datasets.task import Task
from projectgen.errors import ProjectGenError
from projectgen.experiments import ExperimentSpec, run_experiment
from projectgen.experiments.tables import custom_scores_table, pass_table
from projectgen.graphs import architecture_stage, build_project_graph, code_stage
from projectgen.runs import CustomMethod, RunLayout, Score


# --------------------------------------------------------------------------- the method

def design_then_code_graph(agents: Any, settings: Settings, models: Any) -> Any:
    """Architecture (with its judge), then code (with the code judge, which runs the check tests)."""
    if agents is None:
        raise ProjectGenError("design-then-code needs the ProjectGen agents (give a model)")
    return build_project_graph(stages=[
        ("architecture", architecture_stage(agents.architect, [agents.architecture_judge], settings)),
        ("code", code_stage(agents.coder, [agents.code_judge], settings, summarizer=agents.memory_summarizer)),
    ])


def design_then_code() -> CustomMethod:
    """The method factory `--method` names."""
    return CustomMethod(name="design-then-code", label="architecture then code, no skeleton stage",
                        graph=design_then_code_graph, base="projectgen")


# --------------------------------------------------------------------------- the scorer

def public_definitions(code: str) -> list[ast.AST]:
    """The module's and its classes' public functions and classes (a file that does not parse has none)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            found.append(node)
            if isinstance(node, ast.ClassDef):
                found += [child for child in node.body if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and not child.name.startswith("_")]
    return found


class DocstringCoverage:
    """Share (0-100) of the output's public functions and classes with a docstring; None without any."""

    name = "docstrings"

    def score(self, task: Task, folder: RunLayout, runner: Any, unit_report: Any) -> Score | None:
        if not folder.repository.is_dir():
            return None
        definitions = [node for path in sorted(folder.repository.rglob("*.py"))
                       for node in public_definitions(path.read_text(encoding="utf-8", errors="replace"))]
        if not definitions:
            return None
        documented = sum(1 for node in definitions if ast.get_docstring(node))  # type: ignore[arg-type]
        return Score(value=100 * documented / len(definitions), passed=documented, total=len(definitions))


def docstring_coverage() -> DocstringCoverage:
    """The scorer factory `--scorer` names."""
    return DocstringCoverage()


# --------------------------------------------------------------------------- the experiment, from Python

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="experiment folder (default: a new temporary folder)")
    parser.add_argument("--fresh", action="store_true", help="start every pair again in --out")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="projectgen-custom-method-"))
    here = Path(__file__).resolve()
    print("model: reference replay -- NOT a real model; answers come from each task's reference code")
    try:
        spec = ExperimentSpec(dataset=example_tasks_dir(), models=("reference",), tasks=("wordfreq",),
                              methods=("projectgen", f"{here}:design_then_code"),
                              scorers=(f"{here}:docstring_coverage",))
        results = run_experiment(spec, out, fresh=args.fresh)
    except ProjectGenError as exc:  # e.g. this file changed since the folder's runs
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for title, table in (("#Pass per task", pass_table(results)), ("custom scores", custom_scores_table(results))):
        if table is not None:
            header, rows = table
            print(f"\n{title}:\n  " + " | ".join(header))
            for row in rows:
                print("  " + " | ".join(row))
    print(f"\nresults: {out / 'results.md'}")
    return 0 if all(report.final.errors == 0 for report in results.models) else 1


if __name__ == "__main__":
    sys.exit(main())
