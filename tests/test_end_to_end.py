"""End to end on CodeProjectEval tasks: the real agents, graph and sandbox, driven by a replay
of each task's reference code (`projectgen.oracles.reference_replay`), not by a model.

- The plain replay must reach a repository equal to the reference that passes every hidden
  unit test, each stage accepted on its first iteration.
- A replay whose first code version breaks one function that the check tests exercise must
  be repaired by the code-judge loop: two code rounds, the first failing its check tests,
  the second passing them, and every hidden unit test passing at the end. One task repairs
  with SEARCH/REPLACE edits, the other with whole files.

The first run of a task builds its cached test environment (~20-30 s); later runs take a
few seconds each.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from projectgen import load_task
from projectgen.config import EditFormat, Settings
from projectgen.datasets.task import Task
from projectgen.llm import ScriptedChatModel
from projectgen.oracles.reference_replay import Breakage, break_function, reference_script, reference_text_files
from projectgen.runs import RunOutcome, run_project

pytestmark = pytest.mark.datasets

TASKS = ("deprecated", "tinydb")

# One function per task whose breakage the task's check tests catch (see the check_tests folder):
# deprecated: every classic/sphinx `deprecated` warning message comes from ClassicAdapter.get_deprecated_msg;
# tinydb: check_tests/test_tinydb.py::test_upsert_operation calls Table.upsert.
REPAIRS: list[tuple[str, Breakage, EditFormat, str]] = [
    ("deprecated", Breakage("deprecated/classic.py", "ClassicAdapter.get_deprecated_msg"), "search_replace",
     "test_classic_deprecated_function__warns"),
    ("tinydb", Breakage("tinydb/table.py", "Table.upsert"), "whole", "test_upsert_operation"),
]

MIN_UNIT_TESTS = 100


@pytest.fixture(scope="module")
def tasks(shared_datasets: Path) -> dict[str, Task]:
    root = shared_datasets / "CodeProjectEval"
    missing = [name for name in TASKS if not (root / name).is_dir()]
    if missing:
        pytest.skip(f"CodeProjectEval task(s) {', '.join(missing)} not found under {root}")
    return {name: load_task(root / name) for name in TASKS}


def run(task: Task, out_dir: Path, *, breakage: Breakage | None = None,
        edit_format: EditFormat = "whole") -> RunOutcome:
    script = reference_script(task, breakage=breakage, edit_format=edit_format)
    model = ScriptedChatModel(script=script, label=script.label)
    return run_project(task, models=model, settings=Settings(edit_format=edit_format), out_dir=out_dir)


def code_verdicts(outcome: RunOutcome) -> list[dict]:
    return [v for v in outcome.state["verdicts"] if v["stage"] == "code"]


def assert_all_unit_tests_pass(outcome: RunOutcome) -> None:
    report = outcome.unit_report
    assert report is not None
    assert report.error is None and not report.collection_errors, report.output_tail
    assert report.total > MIN_UNIT_TESTS
    assert report.passed == report.total, [t.nodeid for t in report.failures()]


def written_files(out_dir: Path) -> dict[str, str]:
    root = out_dir / "repository"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", TASKS)
def test_reference_replay_passes_every_hidden_unit_test(tasks: dict[str, Task], name: str, tmp_path: Path):
    task = tasks[name]
    outcome = run(task, tmp_path / "run")
    summary = outcome.summary

    assert summary.stopped is None
    for stage in ("architecture", "skeleton", "code"):
        assert summary.stages[stage].iterations == 1, stage
        assert summary.stages[stage].accepted, stage
    (verdict,) = code_verdicts(outcome)
    assert verdict["iteration"] == 1 and verdict["accepted"]
    assert verdict["check"]["status"] == "passed"
    assert verdict["check"]["passed"] == verdict["check"]["total"] > 0
    assert summary.edits.requests == 0

    reference = reference_text_files(task)  # data files (py.typed) too: the tree names them
    assert outcome.repository == reference
    assert written_files(tmp_path / "run") == reference
    assert_all_unit_tests_pass(outcome)
    assert summary.unit_tests is not None and summary.unit_tests["status"] == "passed"
    # The summary names the replay as such; nobody can take it for a model's work.
    assert summary.models and all("scripted" in m and "not a model" in m for m in summary.models.values())


@pytest.mark.parametrize("name, breakage, edit_format, failing_test", REPAIRS, ids=[r[0] for r in REPAIRS])
def test_code_judge_loop_repairs_a_broken_function(tasks: dict[str, Task], name: str, breakage: Breakage,
                                                   edit_format: EditFormat, failing_test: str, tmp_path: Path):
    task = tasks[name]
    reference = reference_text_files(task)
    broken = break_function(reference[breakage.path], breakage)
    assert broken != reference[breakage.path]

    outcome = run(task, tmp_path / "run", breakage=breakage, edit_format=edit_format)
    summary = outcome.summary

    assert summary.stopped is None
    assert summary.stages["architecture"].iterations == summary.stages["skeleton"].iterations == 1
    code = summary.stages["code"]
    assert code.iterations == 2 and code.accepted
    first, second = code.checks
    assert first.status == "failed" and 0 <= first.passed < first.total
    assert any(failing_test in nodeid for nodeid in first.failing), first.failing
    assert second.status == "passed" and second.passed == second.total == first.total

    round_1, round_2 = code_verdicts(outcome)
    assert not round_1["accepted"] and list(round_1["files"]) == [breakage.path]
    assert round_1["log"], "the failing check tests' log goes to the coder"
    assert round_2["accepted"]

    # One repair request, of the broken file only, in the configured format, applied cleanly.
    (edit,) = outcome.state["edits"]
    assert (edit["path"], edit["iteration"], edit["format"]) == (breakage.path, 2, edit_format)
    assert edit["well_formed"] and edit["applied"] >= 1 and edit["failed"] == 0
    assert summary.edits.requests == summary.edits.well_formed == 1

    # The stage memory records the revision with the check counts around it.
    (entry,) = [m for m in outcome.state["memory"] if m["stage"] == "code"]
    assert entry["target"] == breakage.path and entry["iteration"] == 1
    assert (entry["passed_before"], entry["passed_after"]) == (first.passed, second.passed)
    assert breakage.body in entry["diff"]

    assert outcome.repository == reference
    assert_all_unit_tests_pass(outcome)
