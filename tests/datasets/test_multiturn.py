"""Multi-turn tasks: the folder format, its loader's one-line errors, the snapshot, and validation in the sandbox."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from projectgen.datasets.multiturn import (TURN_SUITE, bundled_dataset_dir, check_multiturn_task,
                                           load_multiturn_dataset, load_multiturn_task, turn_task)
from projectgen.errors import ProjectGenError, TaskFormatError
from projectgen.evaluation.runner import SandboxRunner

from test_support import write_multiturn_task

ADD = ("Write add(a, b).", "def add(a, b):\n    return a + b\n",
       {"test_t1.py": "from mod import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
ADD_THREE = ("add takes an optional third number c (default 0).", "def add(a, b, c=0):\n    return a + b + c\n",
             {"test_t2.py": "from mod import add\n\ndef test_three():\n    assert add(1, 2, 3) == 6\n"})


def test_the_bundled_dataset_loads_with_both_levels():
    tasks, errors = load_multiturn_dataset(bundled_dataset_dir())
    assert errors == {}
    by_id = {task.id: task for task in tasks}
    assert sorted(by_id) == ["durations", "grades", "kvstore-cli", "kvstore-counter", "roman", "slugify"]
    assert {task.id for task in tasks if task.level == "function"} == {"durations", "grades", "roman", "slugify"}
    assert {task.id: task.language for task in tasks if task.language != "python"} == {"grades": "java"}
    assert by_id["grades"].turns[0].reference == "turns/1/reference.java"
    assert all(3 <= len(task.turns) <= 5 for task in tasks if task.level == "function")
    assert sorted(len(task.turns) for task in tasks if task.level == "repository") == [4, 4]
    cli = by_id["kvstore-cli"]
    snapshot = cli.snapshot()
    assert "kvstore/store.py" in snapshot and "kvstore/__init__.py" in snapshot
    assert cli.target not in snapshot  # the target is what each turn writes
    assert cli.context == ("kvstore/store.py", "kvstore/storage.py", "kvstore/codec.py", "kvstore/errors.py")
    assert cli.reference_code(0) == ""  # no cli.py before turn 1
    assert "--namespace" in cli.reference_code(4) and "--namespace" not in cli.reference_code(3)


def test_a_candidate_is_the_snapshot_with_the_target_replaced_and_the_snapshot_is_unchanged():
    task = load_multiturn_task(bundled_dataset_dir() / "kvstore-counter")
    before = task.snapshot()
    candidate = task.candidate("print('mine')\n")
    assert candidate["kvstore/counter.py"] == "print('mine')\n"
    assert {k: v for k, v in candidate.items() if k != task.target} == before
    assert task.snapshot() == before and task.target not in task.snapshot()
    function_level = load_multiturn_task(bundled_dataset_dir() / "roman")
    assert function_level.candidate("x = 1\n") == {"roman.py": "x = 1\n"}


def test_turn_task_is_one_suite_named_after_the_turn():
    task = load_multiturn_task(bundled_dataset_dir() / "slugify")
    sandbox_task = turn_task(task, 3)
    assert sandbox_task.id == "slugify.turn3" and sandbox_task.root == task.root
    assert sandbox_task.suites[TURN_SUITE].paths == ("turns/3/tests",)
    assert sandbox_task.docs.prd == task.turns[2].requirement and not sandbox_task.has_reference
    with pytest.raises(ProjectGenError, match="turns 1 to 4, not 5"):
        turn_task(task, 5)


@pytest.mark.parametrize("config, turns, problem", [
    ('level = "method"\ntarget = "m.py"\n', 2, "level: expected one of function, repository"),
    ('level = "function"\ntarget = "m.txt"\n', 2, "target: expected a Python file"),
    ('level = "function"\ntarget = "../m.py"\n', 2, "target: unsafe repository path"),
    ('level = "function"\ntarget = "m.py"\ncolour = "red"\n', 2, "unknown key(s) colour"),
    ('level = "function"\ntarget = "m.py"\n', 1, "expected at least two turn folders"),
    ('level = "repository"\ntarget = "m.py"\n', 2, "[repository] is required at repository level"),
    ('level = "function"\ntarget = "m.py"\n[repository]\nroot = "."\n', 2, "[repository] is only for level"),
    ('level = "repository"\ntarget = "m.py"\n[repository]\nroot = "nowhere"\n', 2, "is not a folder"),
    ('level = "repository"\ntarget = "m.py"\n[repository]\nroot = "."\ninclude = ["lib"]\n', 2,
     "include: lib not found"),
    ('level = "function"\ntarget = "m.py"\nstart = "../outside.py"\n', 2, "unsafe repository path"),
])
def test_a_malformed_task_is_one_line_naming_the_config(tmp_path: Path, config: str, turns: int, problem: str):
    root = write_multiturn_task(tmp_path / "t", [ADD, ADD_THREE][:turns])
    (root / "multiturn.toml").write_text(config, encoding="utf-8")
    with pytest.raises(TaskFormatError) as raised:
        load_multiturn_task(root)
    message = str(raised.value)
    assert problem in message and "multiturn.toml" in message and "\n" not in message


def test_turn_folders_must_be_complete_and_numbered_without_gaps(tmp_path: Path):
    root = write_multiturn_task(tmp_path / "t", [ADD, ADD_THREE])
    (root / "turns" / "2").rename(root / "turns" / "3")
    with pytest.raises(TaskFormatError, match=r"numbered 1 to 2 without gaps \(found \[1, 3\]\)"):
        load_multiturn_task(root)
    (root / "turns" / "3").rename(root / "turns" / "2")
    (root / "turns" / "2" / "reference.py").unlink()
    with pytest.raises(TaskFormatError, match="turns/2/reference.py: missing"):
        load_multiturn_task(root)
    (root / "turns" / "2" / "reference.py").write_text("x = 1\n")
    (root / "turns" / "2" / "tests" / "test_t2.py").unlink()
    with pytest.raises(TaskFormatError, match="turns/2/tests/: missing, or holds no test_"):
        load_multiturn_task(root)


def test_a_repository_task_reads_its_snapshot_and_checks_its_context(tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib" / "__init__.py").write_text("")
    (repo / "lib" / "core.py").write_text("def base():\n    return 1\n")
    (repo / "lib" / "target.py").write_text("OLD = True\n")
    root = write_multiturn_task(tmp_path / "tasks" / "t", [ADD, ADD_THREE], target="lib/target.py")
    config = 'level = "repository"\ntarget = "lib/target.py"\n[repository]\nroot = "../../repo"\ninclude = ["lib"]\n'
    (root / "multiturn.toml").write_text(config + 'context = ["lib/core.py"]\n')
    task = load_multiturn_task(root)
    assert task.repository_files == ("lib/__init__.py", "lib/core.py")  # the target's old text is not kept
    assert task.context == ("lib/core.py",)
    (root / "multiturn.toml").write_text(config + 'context = ["lib/missing.py"]\n')
    with pytest.raises(TaskFormatError, match=r"context: lib/missing.py not in the repository snapshot"):
        load_multiturn_task(root)
    (root / "multiturn.toml").write_text(config)
    assert load_multiturn_task(root).context == ("lib/__init__.py", "lib/core.py")  # default: every Python file


def test_a_dataset_reports_broken_tasks_and_refuses_duplicates(tmp_path: Path):
    write_multiturn_task(tmp_path / "good", [ADD, ADD_THREE])
    broken = write_multiturn_task(tmp_path / "broken", [ADD, ADD_THREE])
    (broken / "multiturn.toml").write_text("level = 3\n")
    (tmp_path / "notes").mkdir()  # not a task: ignored
    tasks, errors = load_multiturn_dataset(tmp_path)
    assert [t.id for t in tasks] == ["good"] and list(errors) == ["broken"] and "level" in errors["broken"]
    shutil.copytree(tmp_path / "good", tmp_path / "good2")
    (tmp_path / "good2" / "multiturn.toml").write_text('id = "good"\nlevel = "function"\ntarget = "mod.py"\n')
    with pytest.raises(ProjectGenError, match="share the id"):
        load_multiturn_dataset(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ProjectGenError, match="no multi-turn task folders"):
        load_multiturn_dataset(empty)


def test_validation_names_a_failing_reference_and_tests_that_do_not_discriminate(tmp_path: Path):
    wrong = ("add also subtracts", "def add(a, b, c=0):\n    return a + b - c\n",  # fails its own test below
             {"test_t3.py": "from mod import add\n\ndef test_minus():\n    assert add(5, 1, 1) == 3\n"})
    same = ("nothing new", "def add(a, b, c=0):\n    return a + b + c\n",  # passes on turn 2's reference too
            {"test_t4.py": "from mod import add\n\ndef test_again():\n    assert add(1, 1) == 2\n"})
    task = load_multiturn_task(write_multiturn_task(tmp_path / "t", [ADD, ADD_THREE, wrong, same]))
    runner = SandboxRunner()
    check = check_multiturn_task(task, lambda t, candidate: runner.evaluate(t, candidate, TURN_SUITE))
    assert [t.turn for t in check.turns] == [1, 2, 3, 4]
    assert check.failing_references == [3] and not check.valid
    assert check.not_discriminative == [4]
    assert [t.discriminative for t in check.turns] == [None, True, True, False]
    assert check.expected_passes() == {1: 1, 2: 1, 3: 0, 4: 1}
    problems = check.problems()
    assert any("turn 3's reference does not pass its own tests" in p for p in problems)
    assert any("turn(s) 4 also pass on the previous turn's reference" in p for p in problems)
