"""SR-Eval's repository level as the paper does it (after DevEval): a turn asks for one target function, shows
the code above it in the turn's file as local context, and the answer replaces that function in the turn's file."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from projectgen.protocols.refinement.refiner import Refiner
from projectgen.datasets.multiturn import bundled_dataset_dir, check_multiturn_task, load_multiturn_task
from projectgen.errors import TaskFormatError
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.protocols.refinement.graph import (RefinementContext, build_refinement_graph, initial_refinement_state,
                                          recursion_limit)
from projectgen.repository.edits import fenced_python
from agent_fakes import PromptModel

CLI = bundled_dataset_dir() / "kvstore-cli"


def test_the_bundled_repository_task_asks_for_main_with_the_code_above_it():
    task = load_multiturn_task(CLI)
    assert task.function == "main" and task.answer_name == "main in kvstore/cli.py"
    assert task.answer(0) == ""  # no cli.py before turn 1
    for number in (1, 2, 3, 4):
        answer, file = task.answer(number), task.reference_code(number)
        assert answer.startswith("def main(") and answer.endswith("    return 0\n")
        assert task.local_context(number) + answer == file  # main is the file's last definition
        assert task.target_file(answer, number) == file  # the reference answer puts the reference back
    above = task.local_context(3)
    assert "def _format(" in above and "from .codec import decode, encode" in above and "def main" not in above
    assert "def _format(" not in task.local_context(2)  # the context is the turn's own file


def test_an_answer_replaces_the_function_in_the_turns_file_and_nothing_else():
    task = load_multiturn_task(CLI)
    candidate = task.candidate("def main(argv=None):\n    return 7", 3)
    file = candidate["kvstore/cli.py"]
    assert file == task.local_context(3) + "def main(argv=None):\n    return 7\n"
    assert {k: v for k, v in candidate.items() if k != task.target} == task.snapshot()
    with pytest.raises(ValueError, match="name the turn"):
        task.candidate("def main(): ...\n")


def test_validation_runs_the_previous_turns_function_in_this_turns_file():
    task = load_multiturn_task(CLI)
    seen: list[tuple[str, str]] = []

    def evaluate(sandbox_task, candidate):
        seen.append((sandbox_task.id, candidate[task.target]))
        return TestReport(task_id=sandbox_task.id, suite="check", tests=[TestResult(nodeid="t", outcome=Outcome.PASSED)])

    check_multiturn_task(task, evaluate)
    own, previous = seen[3][1], seen[4][1]  # turn 3: its own reference, then the previous turn's function
    assert seen[3][0] == seen[4][0] == "kvstore-cli.turn3" and own == task.reference_code(3)
    assert previous == task.local_context(3) + task.answer(2)  # turn 2's main, with turn 3's imports and _format


def write_repository_task(root: Path, *, function: str, level: str = "repository",
                          second: str = "def helper():\n    return 1\n\n\ndef target(x):\n    return x + 2\n") -> Path:
    (root / "repo" / "pkg").mkdir(parents=True)
    (root / "repo" / "pkg" / "__init__.py").write_text("")
    config = f'level = "{level}"\ntarget = "pkg/mod.py"\nfunction = "{function}"\n'
    if level == "repository":
        config += '[repository]\nroot = "repo"\ninclude = ["pkg"]\n'
    (root / "multiturn.toml").write_text(config)
    for number, reference in ((1, "def helper():\n    return 1\n\n\ndef target(x):\n    return x + 1\n"),
                              (2, second)):
        folder = root / "turns" / str(number)
        (folder / "tests").mkdir(parents=True)
        (folder / "requirement.md").write_text(f"requirement {number}")
        (folder / "reference.py").write_text(reference)
        (folder / "tests" / f"test_{number}.py").write_text("def test():\n    pass\n")
    return root


@pytest.mark.parametrize("changes, problem", [
    ({"function": "gone"}, "turns/1/reference.py does not define gone"),
    ({"function": "target", "second": "def helper():\n    return 1\n"}, "turns/2/reference.py does not define target"),
    ({"function": "target", "level": "function"}, 'function: only for level = "repository"'),
    ({"function": "not a name"}, "function: expected a function name"),
])
def test_a_target_function_every_turn_does_not_define_is_refused_in_one_line(tmp_path: Path, changes, problem):
    root = write_repository_task(tmp_path / "t", **changes)
    with pytest.raises(TaskFormatError) as error:
        load_multiturn_task(root)
    assert problem in str(error.value) and "\n" not in str(error.value)


def test_the_model_is_asked_for_the_function_with_its_local_context_and_its_answer_is_spliced(tmp_path: Path):
    task = load_multiturn_task(write_repository_task(tmp_path / "t", function="target"))
    assert task.answer(1) == "def target(x):\n    return x + 1\n"
    model = PromptModel(answer=lambda prompt: fenced_python(task.answer(2 if "requirement 2" in prompt else 1)))
    files: list[str] = []

    def evaluate(sandbox_task, candidate):
        files.append(candidate["pkg/mod.py"])
        return TestReport(task_id=sandbox_task.id, suite="check", tests=[TestResult(nodeid="t", outcome=Outcome.PASSED)])

    graph = build_refinement_graph(Refiner(model), "ce", "basic")
    final = asyncio.run(graph.ainvoke(initial_refinement_state(task, "ce", "basic"),
                                      context=RefinementContext(task=task, evaluate=evaluate),
                                      config={"recursion_limit": recursion_limit(task)}))
    assert files == [task.reference_code(1), task.reference_code(2)]
    assert [r["code"] for r in sorted(final["turns"], key=lambda r: r["turn"])] == [task.answer(1), task.answer(2)]
    system_and_user = model.prompts[1]
    assert "You write one Python function, `target in pkg/mod.py`" in system_and_user
    assert "# The code above `target` in `pkg/mod.py`" in system_and_user and "def helper():" in system_and_user
    # Code Edit: turn 1's function is the code to change
    assert "The current `target in pkg/mod.py`:" in system_and_user and "return x + 1" in system_and_user
