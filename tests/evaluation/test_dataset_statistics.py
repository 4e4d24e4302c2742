"""ProjectGen's Table 2 (`projectgen datasets stats`): every figure that can be compared with the printed table is,
exactly, on the 18 CodeProjectEval tasks; the three printed cells that no counting gives are named with why."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from projectgen.cli.main import main
from projectgen.datasets.loaders import load_dataset
from projectgen.errors import ProjectGenError
from projectgen.evaluation.dataset_statistics import (COLUMNS, collected_tests, reference_coverage,
                                                      static_statistics, summary_rows, task_statistics)
from projectgen.evaluation.prd_tokens import prd_tokens

from test_support import paper_table

# Printed cells no counting of the published data gives, and what it gives (docs/fidelity.md, ProjectGen):
PRINTED_ELSEWHERE = {
    ("flask", "loc"): 9308,  # 9314 printed: the 6 lines of flask/sansio/README.md counted as code
    ("voluptuous", "files"): 6,  # 7 printed: its empty py.typed counted as a file (no other task's is)
    ("xmnlp", "prd_tokens"): 3015,  # 3105 printed: digits swapped; the printed AVG 2067 is the mean with 3015
}


@pytest.fixture(scope="module")
def printed() -> dict[str, dict[str, str]]:
    return {row["repository"]: row for row in paper_table("projectgen_table2_dataset_stats.csv")}


@pytest.fixture(scope="module")
def measured(shared_datasets: Path) -> dict[str, object]:
    return {task.id: static_statistics(task) for task in load_dataset(shared_datasets / "CodeProjectEval")}


def test_files_loc_complexity_and_prd_tokens_are_the_printed_table(printed, measured) -> None:
    assert set(measured) == set(printed) - {"AVG", "MEDIAN"}
    for task_id, row in measured.items():
        for column in ("files", "loc", "prd_tokens"):
            expected = PRINTED_ELSEWHERE.get((task_id, column), int(printed[task_id][column]))
            assert row.value(column) == expected, (task_id, column)
        assert f"{row.complexity:.2f}" == printed[task_id]["complexity"], task_id


def test_the_summary_rows_round_to_the_printed_ones(printed, measured) -> None:
    summary = summary_rows(list(measured.values()))
    assert f"{summary['AVG']['files']:.1f}" == printed["AVG"]["files"]
    assert f"{summary['AVG']['complexity']:.2f}" == printed["AVG"]["complexity"]
    assert f"{summary['MEDIAN']['complexity']:.2f}" == printed["MEDIAN"]["complexity"]
    assert summary["MEDIAN"]["loc"] == float(printed["MEDIAN"]["loc"])
    assert int(summary["AVG"]["prd_tokens"]) == int(printed["AVG"]["prd_tokens"])  # 2067.7, printed cut to 2067
    assert summary["counted"]["prd_tokens"] == 18


def test_prd_tokens_are_deepseek_v3_tokens_without_special_tokens() -> None:
    assert prd_tokens("") == 0  # no BOS token added
    assert prd_tokens("Hello world") == 2


def test_a_suite_not_counted_is_said_and_left_out_of_the_summary(task) -> None:
    def count(_task, suite: str) -> int:
        if suite == "unit":
            raise ProjectGenError("the reference cannot collect 1 unit test module(s) here")
        return 4

    row = task_statistics(task, count)
    assert (row.check_tests, row.unit_tests, row.uncounted) == (4, None, ("unit",))
    assert any("unit tests not counted" in note for note in row.notes)
    summary = summary_rows([row, task_statistics(task, lambda _task, _suite: 10)])
    assert (summary["AVG"]["unit_tests"], summary["counted"]["unit_tests"]) == (10.0, 1)
    assert (summary["AVG"]["check_tests"], summary["counted"]["check_tests"]) == (7.0, 2)
    assert summary["AVG"]["unit_tests_cov_pct"] is None  # not measured: no number, not a 0


def test_test_counts_are_what_the_reference_collects_in_the_sandbox(task, runner) -> None:
    count = collected_tests(runner)
    expected = runner.expected_tests(task, "unit")
    assert count(task, "unit") == expected.count + len(expected.left_out) > 0
    assert count(task, "check") == runner.expected_tests(task, "check").count > 0


def test_coverage_is_measured_in_the_sandbox_or_its_absence_said(task, runner) -> None:
    """kvstore's environment has no coverage.py: no number is made up, the row says why and the command would
    exit 1; the reference's tests still ran and passed."""
    report = runner.reference_coverage(task, "check")
    assert report.passed == report.total > 0 and not report.tampered
    assert (report.line_coverage, report.coverage_problem) == (
        None, "coverage.py is not installed in the task's environment")
    row = task_statistics(task, None, reference_coverage(runner))
    assert (row.check_tests_cov_pct, row.unit_tests_cov_pct, row.uncounted) == (None, None, ("check", "unit"))
    assert any("check coverage not measured: coverage.py is not installed" in note for note in row.notes)


def test_the_command_prints_the_table_as_json(capsys) -> None:
    assert main(["datasets", "stats", "examples", "--static", "--json", "--tasks", "kvstore"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["format_version"] == 1 and table["columns"] == list(COLUMNS)
    [row] = table["rows"]
    assert row["task_id"] == "kvstore" and row["files"] > 0 and row["prd_tokens"] > 0
    assert row["unit_tests"] is None and row["unit_tests_cov_pct"] is None
    assert "coverage.py" in table["measures"]["coverage"]
    assert main(["datasets", "stats", "examples", "--static", "--tasks", "nosuch"]) == 2


COVERAGE_TOLERANCE = 2.0
"""Points a measured line coverage may be from the printed integer: the paper's environment and coverage.py
version are not ours (deprecated's check tests: 79.4 here, 80 printed; measured on all 18: docs/fidelity.md)."""


@pytest.mark.slow
def test_counted_tests_and_their_coverage_are_the_printed_ones(shared_datasets: Path, printed,
                                                                env_cache: Path) -> None:
    from projectgen.datasets.loaders import load_task
    from projectgen.evaluation.runner import RunnerSettings, SandboxRunner

    runner = SandboxRunner(RunnerSettings(cache_dir=env_cache))
    count, cover = collected_tests(runner), reference_coverage(runner)
    for task_id in ("deprecated", "csvs-to-sqlite"):
        task = load_task(shared_datasets / "CodeProjectEval" / task_id)
        for suite in ("check", "unit"):
            assert count(task, suite) == int(printed[task_id][f"{suite}_tests"]), (task_id, suite)
            measured = cover(task, suite)
            assert abs(measured - int(printed[task_id][f"{suite}_tests_cov_pct"])) <= COVERAGE_TOLERANCE, (
                task_id, suite, measured)
