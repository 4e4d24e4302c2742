"""RAL-Bench and NL2Repo-Bench load from their published layouts (our own tasks in them: benchmark_layouts/)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from projectgen.datasets.loaders import load_dataset, load_dataset_report, load_task
from projectgen.datasets.published import published_tests
from projectgen.errors import TaskFormatError
from projectgen.experiments.tasks import load_tasks

LAYOUTS = Path(__file__).parent / "benchmark_layouts"
RALBENCH = LAYOUTS / "ralbench"
NL2REPO = LAYOUTS / "nl2repobench"


def test_a_ralbench_checkout_loads_its_tasks_with_suites_reference_and_difficulty() -> None:
    [task] = load_dataset(RALBENCH)
    assert (task.id, task.format, task.difficulty, task.package) == ("wordcount", "ralbench", "easy", "wordcount")
    assert task.root == RALBENCH.resolve()
    assert "count_words" in task.docs.prd and "## Required files\n- wordcount/__init__.py: The package" in task.docs.prd
    assert {name: suite.paths for name, suite in task.suites.items()} == {
        "functional": ("tests/Wordcount/functional_test.py",), "robustness": ("tests/Wordcount/robustness_test.py",),
        "performance": ("tests/Wordcount/performance_test.py",), "resource": ("tests/Wordcount/resource_test.py",)}
    assert task.scored_suite == "functional" and task.has_scored_suite()
    assert task.suite_files("functional") == ("tests/Wordcount/functional_test.py",)  # not the other tasks' tests
    # the yaml names ./repositories/wordcount; the folder is Wordcount
    assert (task.reference_root, task.reference) == ("repositories/Wordcount", ("wordcount/__init__.py",))
    assert "def top_words" in task.reference_repository()["wordcount/__init__.py"]
    assert task.env.env_vars == {"RACB_REPO_ROOT": "{repo}", "WORDCOUNT_TARGET": "generated",
                                 "RACB_PACKAGE_NAME": "wordcount"}
    assert (task.timeout, task.suite_timeouts) == (60.0, {"performance": 120.0})
    assert task.candidate_copies == ("generation/Wordcount",)  # where its performance tests look for it
    assert task.published_tests == 3  # baseline_metrics.functional.functional_tests_total
    assert task.env.requirements == ("psutil",)  # RAL-Bench's resource tests measure themselves with it
    assert load_task(RALBENCH / "tasks" / "Wordcount") == task
    assert load_task(RALBENCH / "tasks" / "Wordcount" / "wordcount.yaml") == task


def test_a_broken_ralbench_task_is_one_error_and_the_others_still_load(tmp_path: Path) -> None:
    bench = tmp_path / "RAL-Bench"
    shutil.copytree(RALBENCH, bench)
    broken = bench / "tasks" / "Broken"
    broken.mkdir()
    (broken / "broken.yaml").write_text("task_id: broken\ndescription: x\ntest_suite:\n"
                                        "  functional: ../../outside_test.py\n", encoding="utf-8")
    tasks, errors = load_dataset_report(bench)
    assert [t.id for t in tasks] == ["wordcount"]
    [error] = errors
    assert "test_suite.functional" in str(error) and "escapes" in str(error)
    assert load_tasks(bench)[1].keys() == {"broken"}  # the experiment knows which task did not load
    listed = bench / "tasks" / "Wordcount" / "wordcount.yaml"  # a list of files, as Dateutil's yaml gives one
    listed.write_text(listed.read_text(encoding="utf-8").replace(
        "functional: ./tests/Wordcount/functional_test.py",
        "functional:\n  - ./tests/Wordcount/functional_test.py\n  - ./tests/Wordcount/robustness_test.py"),
        encoding="utf-8")
    assert load_dataset_report(bench)[0][0].suites["functional"].paths == (
        "tests/Wordcount/functional_test.py", "tests/Wordcount/robustness_test.py")
    (broken / "broken.yaml").write_text("task_id: broken\ntest_suite: {}\n", encoding="utf-8")
    with pytest.raises(TaskFormatError, match="description: missing"):
        load_dataset(bench)


def test_nl2repo_tasks_load_with_their_published_count_difficulty_and_install_step() -> None:
    tasks = {t.id: t for t in load_dataset(NL2REPO)}
    assert tasks.keys() == {"minicalc", "textkit"}
    assert load_dataset(NL2REPO / "test_files") == list(tasks.values())
    calc, kit = tasks["minicalc"], tasks["textkit"]
    assert (calc.format, calc.difficulty, calc.published_tests, calc.env.install) == (
        "nl2repobench", "easy", 3, "editable")
    assert calc.docs.prd.startswith("## Introduction and Goals of the MiniCalc Project")
    assert calc.suites["unit"].paths == ("tests",) and calc.has_scored_suite()
    # the published tasks hold no tests (they live in the task's image): generated, not scored
    assert (kit.difficulty, kit.published_tests, kit.suites) == ("hard", 12, {})  # the csv spells it TextKit
    # commands beyond a plain editable install run as the setup script (in the sandbox), pytest left out
    assert (kit.env.install, kit.env.setup_script) == ("script", "set -e\necho 'TextKit' >> README.md\n"
                                                                 "pip install -e .\n")
    assert not kit.has_scored_suite()
    assert published_tests(kit) == 12  # the benchmark's own count is the published denominator
    assert load_task(NL2REPO / "test_files" / "minicalc") == calc


def test_a_malformed_nl2repo_count_names_its_file(tmp_path: Path) -> None:
    shutil.copytree(NL2REPO, tmp_path / "bench")
    (tmp_path / "bench" / "test_files" / "textkit" / "test_case_count.txt").write_text("many", encoding="utf-8")
    tasks, errors = load_dataset_report(tmp_path / "bench")
    assert [t.id for t in tasks] == ["minicalc"]
    assert "test_case_count.txt" in str(errors[0]) and "'many'" in str(errors[0])
    assert load_tasks(tmp_path / "bench")[1].keys() == {"textkit"}


def test_a_plain_run_of_a_ralbench_task_selects_by_its_scored_suite_and_records_its_folder() -> None:
    from projectgen.config import AttemptSettings
    from projectgen.errors import ProjectGenError
    from projectgen.runs.request import RunRequest

    task = load_task(RALBENCH / "tasks" / "Wordcount")
    # LiveCoder's settings: the paper's selection, and the functional tests as every method's execution feedback
    assert task.settings_profile == {"profile": "paper", "feedback_suite": "unit"}
    request = RunRequest.for_task(task, models={"default": "reference"})  # no --selection, no --profile
    assert request.settings.feedback_suite == "unit"  # recorded in run.json with the rest of the settings
    assert (request.settings.profile, request.attempt_settings.selection) == ("paper", "unit")
    assert task.role_suite(request.attempt_settings.selection) == "functional"  # what picks the best attempt
    assert request.task_path == str((RALBENCH / "tasks" / "Wordcount").resolve())  # not the benchmark's root
    assert load_task(request.task_path) == task  # a resumed run loads the same task
    with pytest.raises(ProjectGenError, match="has no check tests"):  # RAL-Bench gives no visible tests
        RunRequest.for_task(task, models={"default": "reference"}, attempt_settings=AttemptSettings(selection="check"))
    calc = load_task(NL2REPO / "test_files" / "minicalc")  # NL2Repo-Bench publishes no visible tests either
    assert RunRequest.for_task(calc).attempt_settings.selection == "unit"
