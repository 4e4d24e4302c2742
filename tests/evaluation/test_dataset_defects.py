"""A file the reference reads that the dataset does not ship is reported as the dataset's defect, not hidden."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from projectgen.datasets.catalog import find_published
from projectgen.datasets.integrity import missing_from_copy
from projectgen.datasets.known_defects import KNOWN_DEFECTS_FILE, declared_defects, exercise_defect_key, known_defects
from projectgen.datasets.loaders import load_task
from projectgen.datasets.task import Task
from projectgen.evaluation.dataset_defects import dataset_defects, missing_files
from projectgen.evaluation.report import CollectionError, Outcome, TestReport, TestResult
from projectgen.experiments.reference_bench import bench_reference, published_gap, row_from_report

GEOTEXT_ERROR = ("geotext/geotext.py:46: in read_table\n    with io.open(filename, 'r', encoding=encoding) as f:\n"
                 "E   FileNotFoundError: [Errno 2] No such file or directory: "
                 "'/tmp/projectgen-ws-26093-geotext-ew8g1lqi/repo/geotext/data_file/cities15000.txt'")


def report(*, collection: str = "", failure: str = "") -> TestReport:
    return TestReport(task_id="t", suite="unit",
                      collection_errors=[CollectionError(nodeid="unit_tests/test_geotext.py", message=collection)]
                      if collection else [],
                      tests=[TestResult(nodeid="tests/test_a.py::test_a", outcome=Outcome.FAILED, message=failure)]
                      if failure else [])


def test_a_missing_file_inside_the_repository_is_a_defect_unless_the_task_ships_it() -> None:
    assert missing_files(report(collection=GEOTEXT_ERROR)) == ["geotext/data_file/cities15000.txt"]
    shown = GEOTEXT_ERROR.replace("/tmp/projectgen-ws-26093-geotext-ew8g1lqi/repo", "/workspace")  # as reports say it
    assert missing_files(report(collection=shown)) == ["geotext/data_file/cities15000.txt"]
    assert dataset_defects(report(collection=GEOTEXT_ERROR), {"geotext/geotext.py"}) == [
        "dataset defect: the reference reads geotext/data_file/cities15000.txt, which the dataset does not ship"]
    # Shipped, the file's absence is the harness's (or a candidate's) problem, not the dataset's.
    assert dataset_defects(report(collection=GEOTEXT_ERROR), {"geotext/data_file/cities15000.txt"}) == []
    # A missing file outside the repository (a model download, a home folder) is no dataset defect.
    outside = "FileNotFoundError: [Errno 2] No such file or directory: '/root/.cache/model.bin'"
    assert dataset_defects(report(failure=outside), set()) == []
    assert dataset_defects(report(failure="AssertionError: 1 != 2"), set()) == []


# mypy run by a test over a folder the dataset renamed: it names the path relative to the repository
MYPY_ERROR = ("    def test_types(self):\n>       self.fail(messages)\nE       AssertionError: Mypy errors:\n"
              "E       checks: error: Cannot read file: No such file or directory\nE       \n"
              "E       Found 1 error in 1 file (errors prevented further checking)")
# a test that renders a template folder into its tmp_path and opens a file the template never had
TEMPORARY_ERROR = ("E       FileNotFoundError: [Errno 2] No such file or directory: '/tmp/projectgen-ws-1-t-abc/tmp/"
                   "pytest-of-sandbox/pytest-0/test_render0/out/.hidden_marker'")


def test_a_path_mypy_cannot_read_is_a_defect_unless_the_task_ships_it() -> None:
    assert missing_files(report(failure=MYPY_ERROR)) == ["checks"]
    assert dataset_defects(report(failure=MYPY_ERROR), {"pkg/a.py", "unit_tests/test_a.py"}) == [
        "dataset defect: the reference reads checks, which the dataset does not ship"]
    # a folder the task ships: mypy's failure there is not the dataset's
    assert dataset_defects(report(failure=MYPY_ERROR), {"checks/test_a.py"}) == []


def test_a_file_missing_from_a_tests_temporary_folder_is_a_defect_when_no_shipped_file_has_its_name() -> None:
    assert dataset_defects(report(failure=TEMPORARY_ERROR), {"templates/in/logo.png"}) == [
        "dataset defect: a test expects .hidden_marker in its temporary folder (out/.hidden_marker), and the "
        "dataset ships no file of that name"]
    # the task ships a file of that name: the copy's absence is the code's (or the harness's) problem
    assert dataset_defects(report(failure=TEMPORARY_ERROR), {"templates/in/.hidden_marker"}) == []


def test_a_copy_that_lacks_published_files_names_them(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "vocab.txt").write_text("a\n")
    (tmp_path / "config.json").write_text("{}")
    expected = {"t/config.json": "0", "t/models/vocab.txt": "0", "t/models/weights.onnx": "0",
                "other/models/weights.onnx": "0"}
    assert missing_from_copy(tmp_path, expected, "t") == ["models/weights.onnx"]
    assert missing_from_copy(tmp_path, expected, "unlisted") == []
    # a folder holding none of the task's published files is not a copy of it
    assert missing_from_copy(tmp_path, {"t/elsewhere.py": "0"}, "t") == []
    row = row_from_report(report(failure="AssertionError"), None, set(), absent=["models/weights.onnx"])
    assert row.defects == ["dataset defect: this copy lacks 1 published file(s) (models/weights.onnx)"]
    assert row.note.startswith("dataset defect: this copy lacks")
    # a suite that passes did not need the file (zxcvbn's copy lacks a JSON file no test reads)
    passing = TestReport(task_id="t", suite="unit",
                         tests=[TestResult(nodeid="unit_tests/test_a.py::a", outcome=Outcome.PASSED)])
    assert row_from_report(passing, None, set(), absent=["models/weights.onnx"]).defects == []


def test_the_bench_row_says_why_the_reference_passes_other_than_the_papers_count() -> None:
    def result(name: str, outcome: Outcome, message: str = "") -> TestResult:
        return TestResult(nodeid=f"unit_tests/test_a.py::{name}", outcome=outcome, message=message)

    skip = "('/tmp/projectgen-ws-1-t-abc/repo/unit_tests/test_a.py', 12, 'Skipped: Windows only')"
    ran = TestReport(task_id="t", suite="unit", tests=[result("a", Outcome.PASSED), result("b", Outcome.SKIPPED, skip),
                                                       result("c", Outcome.SKIPPED, skip)])
    assert published_gap(ran, 5) == "the paper counts 5 tests, 3 ran here, 2 skipped (Windows only x2)"
    assert published_gap(ran, 1) == ""
    assert row_from_report(ran, None, set(), published=5).note == published_gap(ran, 5)
    assert row_from_report(ran, None, set()).note == ""


@pytest.mark.slow  # missing data files are in the default suite through the asset and denominator tests
def test_bench_reference_reports_geotexts_missing_data_file(shared_datasets: Path, runner, tmp_path: Path) -> None:
    rows = bench_reference(shared_datasets / "DevBench", runner, tmp_path / "bench", tasks=["geotext", "chakin"])
    by_task = {row.task_id: row for row in rows}
    # the published dataset has the file (its manifest names it); this copy does not: the environment is incomplete
    assert by_task["geotext"].incomplete == [
        "environment incomplete: missing data file: this copy of the task lacks 1 published file(s) "
        "(geotext/data_file/cities15000.txt; `projectgen datasets fetch` gets a complete copy)"]
    assert by_task["geotext"].note.startswith("environment incomplete: missing data file")
    assert by_task["geotext"].defects == []  # named once, as the environment's
    assert by_task["chakin"].incomplete == [] and by_task["chakin"].passed == by_task["chakin"].total == 1


def test_tests_that_import_a_suite_kept_from_them_are_a_defect() -> None:
    """A check test importing the hidden suite's helpers cannot run in a generator's loop, the reference's
    included; an import error of any other module is no such defect."""
    error = ("check_tests/test_cli.py:5: in <module>\n    from unit_tests.helpers import data_dir\n"
             "E   ModuleNotFoundError: No module named 'unit_tests.helpers'")
    check = TestReport(task_id="t", suite="check",
                       collection_errors=[CollectionError(nodeid="check_tests/test_cli.py", message=error)])
    assert dataset_defects(check, set(), {"unit_tests"}) == [
        "dataset defect: the check tests import unit_tests, another suite's folder, which their run does not have "
        "(hidden from it)"]
    assert dataset_defects(check, set(), {"acceptance_tests"}) == []
    other = check.model_copy(update={"collection_errors": [CollectionError(
        nodeid="check_tests/test_cli.py", message="E   ModuleNotFoundError: No module named 'requests'")]})
    assert dataset_defects(other, set(), {"unit_tests"}) == []


def test_a_known_defect_is_named_when_one_of_its_tests_does_not_pass(tmp_path: Path) -> None:
    """A defect no output shows (a dotfile the dataset lacks makes an assertion fail) is data with its tests;
    the bench row names it only when one of them did not pass."""
    table = tmp_path / "defects.toml"
    table.write_text('["codeprojecteval/t"]\ntests = ["unit_tests/test_a.py::a", "unit_tests/test_a.py::b"]\n'
                     'defect = "unit_tests/.env is not in the dataset"\n', encoding="utf-8")
    task = Task.model_construct(id="t", format="codeprojecteval")
    known = known_defects(task, table)
    assert known_defects(Task.model_construct(id="t", format="devbench"), table) == []

    def run(outcome_b: Outcome) -> TestReport:
        return TestReport(task_id="t", suite="unit", tests=[
            TestResult(nodeid="unit_tests/test_a.py::a", outcome=Outcome.PASSED),
            TestResult(nodeid="unit_tests/test_a.py::b", outcome=outcome_b, message="assert False")])

    assert row_from_report(run(Outcome.FAILED), None, set(), known=known).defects == [
        "dataset defect: unit_tests/.env is not in the dataset (1 test(s): unit_tests/test_a.py::b)"]
    assert row_from_report(run(Outcome.PASSED), None, set(), known=known).defects == []


def test_every_packaged_known_defect_names_tests_its_task_has(shared_datasets: Path) -> None:
    for key in tomllib.loads(KNOWN_DEFECTS_FILE.read_text(encoding="utf-8")):
        if key.startswith("exercism/"):
            continue  # LiveRepoReflection's exercises are not kept here: the next test checks their shape
        fmt, task_id = key.split("/")
        assert find_published(fmt) is not None
        task = load_task(shared_datasets / find_published(fmt).folder_name / task_id)
        [defect] = known_defects(task)
        for test in defect.tests:
            path, name = test.split("::")
            assert path in task.suite_files(task.scored_suite)
            assert f"def {name}(" in (task.root / path).read_text(encoding="utf-8")


def test_a_bench_row_of_an_incomplete_environment_says_so_first_and_names_a_lacking_file_once() -> None:
    from projectgen.evaluation.report import EnvironmentInfo

    line = ("environment incomplete: missing data file: this copy of the task lacks 1 published file(s) "
            "(geotext/data_file/cities15000.txt; `projectgen datasets fetch` gets a complete copy)")
    ran = report(collection=GEOTEXT_ERROR).model_copy(update={"environment": EnvironmentInfo(
        key="k", python="3.11.2", path="/env", incomplete=[line])})
    row = row_from_report(ran, None, set(), absent=["geotext/data_file/cities15000.txt"])
    assert row.incomplete == [line]
    assert row.note.startswith(line)
    assert "dataset defect" not in row.note  # the lacking file is named once, as the environment's
    older = report(collection=GEOTEXT_ERROR)  # a report from before environments were recorded
    assert row_from_report(older, None, set(), absent=["geotext/data_file/cities15000.txt"]).defects[0].startswith(
        "dataset defect: this copy lacks 1 published file(s)")


def test_every_packaged_exercise_declaration_is_keyed_by_its_folders_and_names_tests_inside_it() -> None:
    """An exercise's key is 'exercism/<language>/unit_test_<uuid>/<exercise>' (what `exercise_defect_key` makes
    of its folder), and each test it names is a path below the exercise folder, as the try records give them."""
    keys = [key for key in tomllib.loads(KNOWN_DEFECTS_FILE.read_text(encoding="utf-8")) if key.startswith("exercism/")]
    assert keys
    for key in keys:
        _, language, parent, name = key.split("/")
        assert language in {"python", "go", "rust", "cpp", "javascript", "java"}
        assert re.fullmatch(r"unit_test_[0-9a-f]{8}(_[0-9a-f]{4}){3}_[0-9a-f]{12}", parent)
        assert exercise_defect_key(language.capitalize(), Path("/any") / parent / name) == key
        [defect] = declared_defects(key)
        assert defect.tests and all(test.startswith(f"{name}/") for test in defect.tests)
