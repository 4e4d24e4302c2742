"""The public API stays small (at most 40 names) and the README's table shows exactly it."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import projectgen

README = Path(__file__).resolve().parents[1] / "README.md"
LIMIT = 40


def readme_table_names() -> set[str]:
    """The backticked names in the names column of the README's "## Public API" table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Public API\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("|") and "---" not in line]
    return {name for row in rows[1:] for name in re.findall(r"`(\w+)`", row[2])}


def test_the_public_api_has_at_most_40_names() -> None:
    assert len(projectgen.__all__) <= LIMIT, f"{len(projectgen.__all__)} public names: {projectgen.__all__}"


def test_the_readme_table_lists_exactly_the_public_api() -> None:
    assert readme_table_names() == set(projectgen.__all__) - {"__version__"}


def test_each_public_name_comes_from_where_its_table_says() -> None:
    # every lazily exported name is the object its module defines (no stale path in the table)
    for name in projectgen.__all__:
        if name == "__version__":
            continue
        module = importlib.import_module(projectgen._EXPORTS[name])
        assert getattr(projectgen, name) is getattr(module, name), name


def test_names_left_out_of_the_api_are_imported_from_their_package() -> None:
    from projectgen.datasets import load_dataset, load_exercise, load_multiturn_task
    from projectgen.evaluation import average_sketchbleu, loc_weighted_average, pass_rate
    from projectgen.graphs import build_attempts_graph
    from projectgen.protocols.evolve.graph import build_evolve_graph
    from projectgen.protocols.evolve.reviser import TreeReviser
    from projectgen.protocols.refinement.graph import build_refinement_graph
    from projectgen.protocols.refinement.refiner import Refiner
    from projectgen.protocols.reflection.unit import run_reflection
    from projectgen.runs import METHODS

    assert all(callable(thing) for thing in (load_dataset, load_exercise, load_multiturn_task, average_sketchbleu,
                                             loc_weighted_average, pass_rate, build_attempts_graph,
                                             build_evolve_graph, build_refinement_graph, run_reflection))
    assert Refiner.__name__ == "Refiner" and TreeReviser.__name__ == "TreeReviser" and "livecoder" in METHODS
    assert not hasattr(projectgen, "FaultPlan") and not hasattr(projectgen, "build_attempts_graph")
