"""`construct_exercises` end to end on scripted drafts and a marker-reading runner (fast): the statuses, the reports,
the packaged exercise as `reflect` loads it, and a resume that redoes no finished seed.

The runner here never runs code: it reads markers the scripted drafts carry (a strict suite fails a `# bad`
solution on one test), which is all the pipeline's decisions need. The same pipeline in the real sandbox on the
bundled seeds is `test_construct_sandbox.py`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projectgen.construction.execution import WORK
from projectgen.datasets.exercism import load_exercises
from projectgen.evaluation.report import Outcome, TestReport, TestResult
from projectgen.experiments.ledger import Ledger
from projectgen.llm import ScriptedChatModel
from projectgen.llm.usage import UsageRecorder
from projectgen.protocols.exercise_construction.agents import ModelDesigner, ModelSolutionWriter, ModelTestWriter, ExerciseSeed
from projectgen.protocols.exercise_construction.batch import DECONTAMINATION, HUMAN_REVIEW, REPORT, construct_exercises
from projectgen.protocols.exercise_construction.judges import Judge
from projectgen.protocols.exercise_construction.seed_run import DROPPED, KEPT, REVIEW, Drafter, ExerciseConstruction

REFERENCE = "Keep a tally of votes per candidate and report the winner; ties go to the name first in order."


class MarkerRunner:
    """Outcomes from markers: a suite file marked `# strict` has 3 tests and fails a `# bad` solution on the
    third; one marked `# loose` has 2 tests any solution passes; `# hangs` in the code is a timeout."""

    def __init__(self) -> None:
        self.runs = 0

    def evaluate(self, task: Any, candidate: Any, suite: str = "unit") -> TestReport:
        self.runs += 1
        code = "\n".join(text for text in candidate.values() if isinstance(text, str))
        tests = "\n".join((task.root / path).read_text() for path in task.suite(suite).paths)
        if "# hangs" in code:
            return TestReport(task_id=task.id, suite=suite, timed_out=True)
        names = ["a", "b", "c"] if "# strict" in tests else ["a", "b"]
        failing = {"c"} if "# bad" in code else set()
        return TestReport(task_id=task.id, suite=suite, tests=[
            TestResult(nodeid=f"x_test.py::{n}", outcome=Outcome.FAILED if n in failing else Outcome.PASSED)
            for n in names])


def definition(seed: str, project: str, instructions: str) -> dict[str, Any]:
    return {"role": "exercise_designer", "target": f"{seed}/1",
            "content": {"topic": seed, "project": project, "instructions": instructions,
                        "solution_files": ["__init__.py", "core.py"]}}


def drafts(seed: str, project: str, judge_first: str) -> list[dict[str, Any]]:
    solution = {"__init__.py": "from .core import run\n"}
    return [
        {"role": "exercise_test_writer", "target": f"{seed}/1",
         "content": {"files": {f"{project}_test.py": "# loose\n"}}},
        {"role": "exercise_test_writer", "target": f"{seed}/2",
         "content": {"files": {f"{project}_test.py": "# strict\n"}}},
        {"role": "exercise_solution_writer", "target": f"{seed}/1",
         "content": {"files": {**solution, "core.py": "def run():\n    pass  # bad\n"}}},
        {"role": "exercise_solution_writer", "target": f"{seed}/2",
         "content": {"files": {**solution, "core.py": "def run():\n    return 1  # good\n"}}},
        {"role": "reflection", "stage": "reflection_whole", "target": project, "iteration": 1,
         "content": f"core.py\n```python\ndef run():\n    return 1  # {judge_first}\n```\n"},
        {"role": "reflection", "stage": "reflection_whole", "target": project, "iteration": 2,
         "content": "core.py\n```python\ndef run():\n    return 1  # good\n```\n"},
    ]


SCRIPT = [
    definition("alpha", "alpha_tally", "Count the words of a text and list the ten most common, ties by first use."),
    *drafts("alpha", "alpha_tally", "bad"),
    definition("easy", "easy_greet", "Greet a person by name, and the world when the name is empty or blank."),
    *drafts("easy", "easy_greet", "good"),
    definition("copied", "vote_tally", REFERENCE.replace("votes", "the votes")),
    {"role": "exercise_designer", "target": "broken/1", "content": "I would rather not."},
]


def construction(model: Any) -> ExerciseConstruction:
    return ExerciseConstruction(
        designers=[Drafter("scripted-a", ModelDesigner(model))],
        test_writers=[Drafter("scripted-a", ModelTestWriter(model)), Drafter("scripted-b", ModelTestWriter(model))],
        solution_writers=[Drafter("scripted-a", ModelSolutionWriter(model)),
                          Drafter("scripted-b", ModelSolutionWriter(model))],
        judges=[Judge("scripted-a", model, "judge")], references={"vote_tally": REFERENCE}, rng_seed=3)


def seeds(*names: str) -> list[ExerciseSeed]:
    return [ExerciseSeed(id=name, language="python", path=f"{name}.py", code=f"# seed {name}\n") for name in names]


def calls(out: Path, seed: str) -> list[Any]:
    """The model calls a seed's unit made (its judges' are in their own reflect run folders)."""
    return UsageRecorder.load(out / WORK / seed / "usage.jsonl").records


def test_construct_decides_each_seed_writes_reports_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "B"
    model = ScriptedChatModel.from_responses(SCRIPT, label="pipeline test replay")
    runner = MarkerRunner()
    first = construct_exercises(seeds("alpha", "copied"), out, construction(model), runner=runner)
    assert first.ids(KEPT) == ["alpha"] and first.ids(DROPPED) == ["copied"]
    runs_first = runner.runs
    assert runs_first == 4 + 2  # the 2 x 2 matrix, then the judge's write and repair

    # Continue with more seeds: the finished ones are skipped (no model call, no sandbox run for them).
    alpha_calls = calls(out, "alpha")
    report = construct_exercises(seeds("alpha", "copied", "easy", "broken"), out, construction(model), runner=runner)
    assert calls(out, "alpha") == alpha_calls
    assert {r.target for r in calls(out, "easy")} == {"easy/1", "easy/2"}
    assert {r.target for r in calls(out, "broken")} == {"broken/1"}
    assert runner.runs == runs_first + 4 + 1  # easy's matrix and one judge try; nothing of alpha again
    assert report.ids(KEPT) == ["alpha"] and report.ids(DROPPED) == ["broken", "copied", "easy"]
    assert report.seeds["easy"]["reason"] == "too easy: every judge passed at the first try"
    assert report.seeds["broken"]["stage"] == "design"

    alpha = report.seeds["alpha"]
    assert alpha["creative"] == "scripted-a" and alpha["creative_index"] == 0
    assert alpha["cross_execution"]["test"] == "t2" and alpha["cross_execution"]["solution"] == "s2"
    assert alpha["difficulty"]["outcomes"] == {"1-judge": "failure-then-success"}

    removed = json.loads((out / DECONTAMINATION).read_text())["removed"]
    assert [(r["seed"], r["reference"]) for r in removed] == [("copied", "vote_tally")] and removed[0]["jaccard"] > 0.8
    assert json.loads((out / HUMAN_REVIEW).read_text()) == {"review": []}
    written = json.loads((out / REPORT).read_text())
    assert written["summary"] == {KEPT: ["alpha"], DROPPED: ["broken", "copied", "easy"], REVIEW: [], "error": []}
    assert written["difficulty_counts"]["success"] == 1
    unit_calls = sum(len(calls(out, seed)) for seed in ("alpha", "copied", "easy", "broken"))
    assert written["cost"]["calls"] == unit_calls + 3  # the judge's calls: alpha's write and repair, easy's write
    assert written["cost"]["by_role"]["reflection"]["calls"] == 3 and written["cost"]["usd"] == 0.0

    exercises = load_exercises(out)
    assert [e.id for e in exercises.exercises] == ["alpha_tally"] and not exercises.errors
    exercise = exercises.exercises[0]
    assert exercise.reference()["core.py"].endswith("# good\n")
    assert exercise.stubs()["core.py"].startswith('"""') or "pass" in exercise.stubs()["core.py"]
    assert [(exercise.folder / t).read_text() for t in exercise.tests] == ["# strict\n"]


def test_a_pair_that_cannot_be_read_goes_to_human_review(tmp_path: Path) -> None:
    script = [definition("slow", "slow_sum", "Sum the numbers of a list, and say when it is empty instead."),
              *[entry for entry in drafts("slow", "slow_sum", "bad") if entry["role"] != "exercise_solution_writer"],
              {"role": "exercise_solution_writer", "target": "slow/1",
               "content": {"files": {"core.py": "def run():\n    return 1  # hangs\n"}}},
              {"role": "exercise_solution_writer", "target": "slow/2",
               "content": {"files": {"core.py": "def run():\n    return 1  # hangs\n"}}}]
    model = ScriptedChatModel.from_responses(script, label="review test replay")
    report = construct_exercises(seeds("slow"), tmp_path / "B", construction(model), runner=MarkerRunner())
    record = report.seeds["slow"]
    assert record["status"] == REVIEW
    assert set(record["cross_execution"]["anomalies"].values()) == {"timeout"}
    review = json.loads((tmp_path / "B" / HUMAN_REVIEW).read_text())["review"]
    assert review[0]["seed"] == "slow"


class DyingRunner(MarkerRunner):
    """The process dies at the first sandbox run (a harness crash or a kill between steps)."""

    def evaluate(self, task: Any, candidate: Any, suite: str = "unit") -> TestReport:
        raise KeyboardInterrupt


def test_a_seed_cut_short_starts_over_without_asking_its_models_again(tmp_path: Path) -> None:
    out = tmp_path / "B"
    model = ScriptedChatModel.from_responses(SCRIPT, label="pipeline test replay")
    try:
        construct_exercises(seeds("alpha"), out, construction(model), runner=DyingRunner())
    except KeyboardInterrupt:
        pass
    asked = calls(out, "alpha")
    assert {r.target for r in asked} == {"alpha/1", "alpha/2"} and len(asked) == 5  # design + 2 suites + 2 solutions
    assert not Ledger(out / "ledger.jsonl").done()  # the killed seed was not recorded as finished
    report = construct_exercises(seeds("alpha"), out, construction(model), runner=MarkerRunner())
    assert report.ids(KEPT) == ["alpha"]
    assert calls(out, "alpha") == asked  # the judge's calls are in its own reflect run folder


def test_draft_paths_written_from_outside_the_project_folder_are_read_inside_it() -> None:
    from projectgen.protocols.exercise_construction.seed_run import in_project

    assert in_project({"alpha_tally/core.py": "x", "core_test.py": "y"}, "alpha_tally") == {"core.py": "x",
                                                                                            "core_test.py": "y"}


class CheckRunner:
    """Check-test runs from markers: a suite marked `# checks nothing` passes on anything; any other passes on the
    reference (code with a `return`) and fails on the empty stub (only `pass` bodies)."""

    def evaluate(self, task: Any, candidate: Any, suite: str = "unit") -> TestReport:
        tests = "\n".join((task.root / path).read_text() for path in task.suite(suite).paths)
        code = "\n".join(text for text in candidate.values() if isinstance(text, str))
        passed = "# checks nothing" in tests or "return" in code
        return TestReport(task_id=task.id, suite=suite, tests=[
            TestResult(nodeid="check_tests/test_x.py::test_x", outcome=Outcome.PASSED if passed else Outcome.FAILED)])


def test_a_refused_check_test_draft_goes_back_as_feedback_and_the_next_is_kept(tmp_path: Path) -> None:
    from projectgen.construction.check_tests import ModelCheckTestWriter, construct_check_tests
    from projectgen.datasets.examples import example_tasks_dir
    from projectgen.datasets.loaders import load_task

    task = load_task(example_tasks_dir() / "without_check_tests" / "tempconv")
    model = ScriptedChatModel.from_responses([
        {"role": "check_test_writer", "iteration": 1,
         "content": {"files": {"check_tests/test_x.py": "# checks nothing\n"}}},
        {"role": "check_test_writer", "iteration": 2,
         "content": {"files": {"check_tests/test_x.py": "def test_x():\n    pass\n"}}}], label="check test replay")
    written, kept, drafts = construct_check_tests(task, ModelCheckTestWriter(model), CheckRunner(),
                                                  out=tmp_path / "T", tries=3)
    assert [d.refused for d in drafts] == ["every test passes on an empty implementation: the tests check nothing",
                                           None]
    assert kept is drafts[1] and written == tmp_path / "T"
    assert (written / "check_tests" / "test_x.py").read_text() == "def test_x():\n    pass\n"
    assert load_task(written).suites["check"].paths == ("check_tests",)
    prompts = (written / ".construct" / "check-tests" / "prompts.jsonl").read_text()
    assert "Your previous draft was refused" in prompts and "the tests check nothing" in prompts


class SpentWriter:
    """A test writer (any object with the Protocol's method) whose budget is spent."""

    async def write_tests(self, definition: Any, gateway: Any, *, target: str) -> Any:
        from projectgen.llm.errors import BudgetExceededError

        raise BudgetExceededError("the token budget is spent")


def test_a_spent_budget_fails_the_seed_and_the_next_run_builds_it(tmp_path: Path) -> None:
    model = ScriptedChatModel.from_responses(SCRIPT, label="pipeline test replay")
    down = ExerciseConstruction(**{**construction(model).__dict__,
                                   "test_writers": [Drafter("spent", SpentWriter())]})
    failed = construct_exercises(seeds("alpha", "easy"), tmp_path / "B", down, runner=MarkerRunner())
    assert failed.ids("error") == ["alpha", "easy"] and "budget is spent" in failed.seeds["alpha"]["reason"]
    assert not (tmp_path / "B" / "alpha_tally").exists()
    report = construct_exercises(seeds("alpha", "easy"), tmp_path / "B", construction(model), runner=MarkerRunner())
    assert report.ids(KEPT) == ["alpha"] and report.ids("error") == []


TWIN_AND_CLASH = [
    # a near-copy of alpha's exercise under another name: dropped as a near-duplicate of the one kept from alpha
    definition("twin", "twin_tally", "Count the words of a text and list the ten most common; ties by first use."),
    *drafts("twin", "twin_tally", "bad"),
    # another exercise under alpha's name: the name is alpha's (earlier in seed order), so it is dropped
    definition("clash", "alpha_tally", "Parse a date in ISO form and say which weekday it falls on, or why not."),
    *[entry for entry in drafts("clash", "alpha_tally", "bad") if entry["role"] != "reflection"],
]


def tree(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_workers_do_not_change_the_construction(tmp_path: Path) -> None:
    """The across-seed steps run after the units in seed order: 1 worker and 3 give the same report and
    exercises, byte for byte, though their units finish in other orders."""
    from projectgen.experiments.executors import LocalExecutor

    names = ("twin", "easy", "clash", "copied", "alpha", "broken")
    made = {}
    for workers in (1, 3):
        out = tmp_path / f"w{workers}"
        model = ScriptedChatModel.from_responses(SCRIPT + TWIN_AND_CLASH, label="pipeline test replay")
        report = construct_exercises(seeds(*names), out, construction(model), runner=MarkerRunner(),
                                     executor=LocalExecutor(workers=workers))
        made[workers] = report, out
    (one, one_out), (three, three_out) = made[1], made[3]
    assert one.ids(KEPT) == ["alpha"] and three.seeds == one.seeds
    assert one.seeds["twin"]["stage"] == "decontamination"
    assert one.seeds["twin"]["decontamination"]["reference"] == "alpha_tally (seed alpha)"
    assert one.seeds["clash"]["reason"] == "exercise alpha_tally was already made from seed alpha"
    for name in (REPORT, DECONTAMINATION, HUMAN_REVIEW):
        assert (one_out / name).read_bytes() == (three_out / name).read_bytes()
    assert tree(one_out / "alpha_tally") == tree(three_out / "alpha_tally")
    # continued (every seed read back from the ledger), the report is the same too
    again = construct_exercises(seeds(*names), three_out, construction(model), runner=MarkerRunner())
    assert again.seeds == one.seeds and (three_out / REPORT).read_bytes() == (one_out / REPORT).read_bytes()
    removed = json.loads((one_out / DECONTAMINATION).read_text())["removed"]
    assert [(r["seed"], r.get("within_set", False)) for r in removed] == [("copied", False), ("twin", True)]
    assert sorted(p.name for p in one_out.iterdir() if not p.name.startswith(".")) == sorted(
        ["alpha_tally", "batch-kind.txt", "construction.json", "decontamination.json", "human-review.json",
         "ledger.jsonl"])


def test_a_folder_of_the_sequential_version_or_of_another_command_is_refused(tmp_path: Path) -> None:
    import pytest

    from projectgen.errors import ProjectGenError
    from projectgen.experiments.batch_folder import claim_batch_folder

    model = ScriptedChatModel.from_responses(SCRIPT, label="pipeline test replay")
    old = tmp_path / "old"
    (old / WORK).mkdir(parents=True)
    (old / WORK / "ledger.jsonl").write_text('{"key": "alpha", "status": "kept"}\n')
    with pytest.raises(ProjectGenError, match="earlier `projectgen construct exercises`.*choose another --out"):
        construct_exercises(seeds("alpha"), old, construction(model), runner=MarkerRunner())
    other = tmp_path / "other"
    claim_batch_folder(other, "reflect")
    with pytest.raises(ProjectGenError, match="made by `projectgen reflect`"):
        construct_exercises(seeds("alpha"), other, construction(model), runner=MarkerRunner())


def test_other_settings_build_a_finished_seed_again(tmp_path: Path) -> None:
    """A ledger line counts only for the settings it was built with: another judge list judges alpha anew, in an
    emptied run folder."""
    out = tmp_path / "B"
    model = ScriptedChatModel.from_responses(SCRIPT, label="pipeline test replay")
    construct_exercises(seeds("alpha"), out, construction(model), runner=MarkerRunner())
    assert (out / WORK / "alpha" / "judges" / "1-judge").is_dir()
    two_judges = ExerciseConstruction(**{**construction(model).__dict__,
                                         "judges": [Judge("scripted-a", model, "judge"),
                                                    Judge("scripted-b", model, "other")]})
    runner = MarkerRunner()
    report = construct_exercises(seeds("alpha"), out, two_judges, runner=runner)
    assert runner.runs == 4 + 2 + 2  # the matrix again, then both judges
    assert set(report.seeds["alpha"]["difficulty"]["outcomes"]) == {"1-judge", "2-other"}
