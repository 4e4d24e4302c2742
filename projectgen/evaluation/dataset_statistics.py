"""ProjectGen's Table 2 for any dataset: per task the reference's files, #LOC and mean cyclomatic complexity,
its check and unit tests, and the PRD's length in tokens, with the table's AVG and MEDIAN rows.

Counted as the paper's numbers come out (checked against the printed table, tests/evaluation/
test_dataset_statistics.py): files and #LOC are the reference's ``*.py`` files and their physical lines, the
complexity is radon's ``cc -a`` average over its blocks, the tokens DeepSeek-V3's (`prd_tokens`). A suite's test
count is what its reference collects in the sandbox (the expected tests and those it skips or xfails), and its
line coverage what coverage.py measures there over the reference's top-level folders, as the benchmark's
`--cov=PACKAGE` does: the reference runs only there (`SandboxRunner.expected_tests`, `reference_coverage`), never
on the host. A figure that could not be had stays empty, with a note saying why, never a guess.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from projectgen.datasets.task import SuiteName, Task
from projectgen.errors import ProjectGenError, one_line
from projectgen.evaluation.metrics import repository_stats
from projectgen.evaluation.prd_tokens import PRD_TOKENIZER, prd_tokens

if TYPE_CHECKING:
    from projectgen.evaluation.runner import SandboxRunner

STATISTICS_FORMAT_VERSION = 1  # of `datasets stats --json`'s document
TABLE_SUITES: tuple[SuiteName, ...] = ("check", "unit")
COLUMNS = ("files", "loc", "complexity", "check_tests", "check_tests_cov_pct", "unit_tests", "unit_tests_cov_pct",
           "prd_tokens")
"""Table 2's columns, named as in the published CSV (shared/paper_tables/projectgen_table2_dataset_stats.csv)."""
MEASURES = {
    "files": "the reference's *.py files",
    "loc": "their physical lines (blank and comment lines too)",
    "complexity": "radon's `cc -a` average over the reference's blocks (functions, methods, classes)",
    "tests": "tests the reference collects in the sandbox (expected + skipped/xfail), per suite",
    "prd_tokens": f"the PRD in {PRD_TOKENIZER} tokens",
    "coverage": "line coverage (%) of the reference's top-level folders and modules by the suite, measured in the "
                "sandbox by coverage.py from the task's environment (none there: not measured)",
}


@dataclass(frozen=True)
class TaskStatistics:
    """One task's row of Table 2; None where a figure could not be had (`notes` says why)."""

    task_id: str
    files: int
    loc: int
    complexity: float | None
    check_tests: int | None
    check_tests_cov_pct: float | None
    unit_tests: int | None
    unit_tests_cov_pct: float | None
    prd_tokens: int
    notes: tuple[str, ...] = field(default=())
    uncounted: tuple[SuiteName, ...] = field(default=(), metadata={"doc": "suites the task has whose tests or "
                                                                          "coverage asked for could not be had "
                                                                          "(a note says why)"})

    def value(self, column: str) -> float | int | None:
        return getattr(self, column)


SuiteCounter = Callable[[Task, SuiteName], int]
"""How many tests a suite of a task has (in the sandbox); raises `ProjectGenError` when it cannot be known."""
SuiteCoverage = Callable[[Task, SuiteName], float]
"""The line coverage (%) of a task's reference by one of its suites; raises `ProjectGenError` when there is none."""


def static_statistics(task: Task) -> TaskStatistics:
    """The figures read from the task's files alone (no test run): size, complexity and PRD tokens."""
    stats = repository_stats(task.reference_repository())
    notes = [f"{len(stats.unparsable_paths)} file(s) radon cannot parse, left out of the complexity: "
             f"{', '.join(stats.unparsable_paths[:3])}"] if stats.unparsable_paths else []
    if not task.has_reference:
        notes.append("no reference implementation")
    has_blocks = stats.python_files > stats.unparsable_files and stats.mean_block_complexity > 0
    return TaskStatistics(
        task_id=task.id, files=stats.python_files, loc=stats.physical_lines,
        complexity=stats.mean_block_complexity if has_blocks else None,
        check_tests=None, check_tests_cov_pct=None, unit_tests=None, unit_tests_cov_pct=None,
        prd_tokens=prd_tokens(task.docs.prd), notes=tuple(notes))


def task_statistics(task: Task, count_tests: SuiteCounter | None,
                    coverage: SuiteCoverage | None = None) -> TaskStatistics:
    """The task's whole row; without `count_tests` (`coverage`) the test (coverage) columns stay empty."""
    row = static_statistics(task)
    figures: dict[str, float | None] = {}
    notes = list(row.notes)
    uncounted = []
    for suite in TABLE_SUITES:
        asked = [(f"{suite}_tests", count_tests, "tests not counted"),
                 (f"{suite}_tests_cov_pct", coverage, "coverage not measured")]
        for column, measure, failed in asked:
            figures[column] = None
            if measure is None or suite not in task.suites:
                continue
            try:
                figures[column] = measure(task, suite)
            except ProjectGenError as exc:
                notes.append(f"{suite} {failed}: {one_line(exc)}")
                if suite not in uncounted:
                    uncounted.append(suite)
        if (count_tests or coverage) and suite not in task.suites:
            notes.append(f"no {suite} tests")
    return TaskStatistics(**{**asdict(row), **figures, "notes": tuple(notes), "uncounted": tuple(uncounted)})


def collected_tests(runner: SandboxRunner) -> SuiteCounter:
    """A `SuiteCounter` that asks the sandbox runner: the tests the reference collects in the sandbox (expected
    ones and those it skips or xfails; a module it cannot collect adds none and is said). Measured once per task
    and suite and cached with the runner's expected tests."""
    def count(task: Task, suite: SuiteName) -> int:
        expected = runner.expected_tests(task, suite)
        if not expected.complete:
            raise ProjectGenError(f"the reference's {suite} run did not finish (timed out or read as tampered)")
        if expected.reference_collection_errors:
            raise ProjectGenError(f"the reference cannot collect {len(expected.reference_collection_errors)} "
                                  f"{suite} test module(s) here ({expected.reference_collection_errors[0]}, ...): "
                                  f"their tests are unknown")
        return expected.count + len(expected.left_out)

    return count


def reference_coverage(runner: SandboxRunner) -> SuiteCoverage:
    """A `SuiteCoverage` that runs the reference's suite in the sandbox with coverage (`reference_coverage`)."""
    def cover(task: Task, suite: SuiteName) -> float:
        report = runner.reference_coverage(task, suite)
        if report.line_coverage is None:
            raise ProjectGenError(report.coverage_problem or report.not_run_reason() or "no coverage was reported")
        return report.line_coverage

    return cover


def summary_rows(rows: Sequence[TaskStatistics]) -> dict[str, dict[str, float | None]]:
    """Table 2's AVG (arithmetic mean) and MEDIAN rows, per column over the tasks that have the figure; None
    where no task has it. `counted` says over how many tasks each column's figures are."""
    avg: dict[str, float | None] = {}
    median: dict[str, float | None] = {}
    counted: dict[str, float | None] = {}
    for column in COLUMNS:
        values = [value for row in rows if (value := row.value(column)) is not None]
        avg[column] = math.fsum(values) / len(values) if values else None
        median[column] = float(statistics.median(values)) if values else None
        counted[column] = len(values)
    return {"AVG": avg, "MEDIAN": median, "counted": counted}


def table_json(rows: Sequence[TaskStatistics], dataset: str) -> dict[str, object]:
    """The table as `--json` writes it: the rows, the summary rows, and how each column was measured."""
    return {"format_version": STATISTICS_FORMAT_VERSION, "dataset": dataset, "columns": list(COLUMNS),
            "measures": MEASURES,
            "rows": [asdict(row) for row in rows], "summary": summary_rows(rows)}
