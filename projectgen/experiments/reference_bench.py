"""Evaluate every task's reference implementation: the harness checking itself.

A reference that fails its own tests means a broken task or a broken harness;
either must be visible before any generated repository is scored against it.
Each task is one unit of the batch engine (`projectgen.experiments.engine`): its row is a
ledger line keyed ``<task-id>:<suite>``, so a second invocation evaluates only what is missing.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from projectgen.datasets.catalog import find_published
from projectgen.datasets.integrity import manifest, missing_from_copy
from projectgen.datasets.known_defects import KnownDefect, known_defects
from projectgen.datasets.published import published_tests
from projectgen.datasets.task import SuiteName, Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.dataset_defects import dataset_defects
from projectgen.evaluation.expectations import declared_counts
from projectgen.evaluation.metrics import pass_rate
from projectgen.evaluation.report import Outcome, TestReport
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.experiments.batch_folder import claim_batch_folder
from projectgen.experiments.engine import Batch, Executor, run_batch
from projectgen.experiments.executors import LocalExecutor, print_progress
from projectgen.experiments.ledger import Ledger
from projectgen.experiments.tasks import load_tasks
from projectgen.runs import layout


class BenchRow(BaseModel):
    """One task's line in the reference bench table."""

    task_id: str
    status: str
    passed: int = 0
    total: int = 0
    pass_rate: float = 0.0
    duration: float = 0.0
    note: str = ""
    report: str | None = None
    defects: list[str] = Field(default_factory=list, description="defects of the task itself (a file the reference "
                               "reads that the dataset does not ship): no candidate can pass there either")
    incomplete: list[str] = Field(default_factory=list, description="why the task's environment here is not its "
                                  "benchmark's (evaluation.assets): the row is 'environment incomplete', not a "
                                  "harness or model failure")


def row_from_report(report: TestReport, report_path: Path | None, shipped: set[str] | None = None,
                    declared_total: int | None = None, *, absent: Sequence[str] = (),
                    hidden: AbstractSet[str] = frozenset(), known: Sequence[KnownDefect] = (),
                    published: int | None = None) -> BenchRow:
    """A test report as a bench row; the note says why a suite did not run cleanly, a defect of the dataset
    first (`dataset_defects`, with `shipped` the task's own files and `hidden` the other suites' folders, kept
    from this run; `absent`: published files this copy of the task lacks, named when the suite did not pass;
    `known`: the task's defects no output shows, named when one of their tests did not pass). With the
    benchmark's frozen total (`[expected_total]`) the row counts out of it, as the benchmark's harness does;
    with the paper's #Tests (`published`) the note says why the reference passes fewer (`published_gap`)."""
    # a file this copy lacks is named once, as the copy's (the published dataset has it)
    defects = dataset_defects(report, shipped | set(absent), hidden) if shipped is not None else []
    unpassed = [test.nodeid for test in report.tests if test.outcome is not Outcome.PASSED]
    defects += [line for defect in known if (line := defect.line(unpassed))]
    incomplete = list(report.environment.incomplete) if report.environment else []
    if absent and report.status != "passed" and not incomplete:  # the runner's note names them (else an older report)
        defects.insert(0, f"dataset defect: this copy lacks {len(absent)} published file(s) ({', '.join(absent[:3])}"
                          f"{' ...' if len(absent) > 3 else ''})")
    notes = [*incomplete, *defects]
    reason = report.not_run_reason()
    if reason:
        notes.append(reason)
    elif report.collection_errors:
        notes.append(f"{len(report.collection_errors)} collection error(s): {report.collection_errors[0].nodeid}")
    if (env := report.environment) and env.python_fallback:
        notes.append(f"Python {env.python_requested} not found: ran on {env.python}")
    if report.environment and report.environment.unsatisfied_requirements:
        notes.append("not installed: " + ", ".join(report.environment.unsatisfied_requirements))
    if report.tampered:
        notes.append(f"tampered with: {report.tampered}")
    if report.unprotected:
        notes.append("unprotected: isolation none")
    if published is not None and (gap := published_gap(report, published)):
        notes.append(gap)
    passed, total = report.passed, report.total
    if declared_total is not None:
        passed, total, over = declared_counts(report, declared_total)
        notes.append(over or f"out of the declared total {declared_total}")
    return BenchRow(
        task_id=report.task_id, status=report.status, passed=passed, total=total,
        pass_rate=pass_rate(passed, total), duration=round(report.duration, 1), note="; ".join(notes),
        report=str(report_path) if report_path else None, defects=defects, incomplete=incomplete,
    )


def published_gap(report: TestReport, published: int) -> str:
    """Why the reference passes other than the paper's #Tests here, in one line: how many tests it collects
    against the paper's count, and the ones it skips here by reason (the paper counts them: a candidate
    cannot pass them here either); '' when it passes exactly the published count."""
    if report.passed == published:
        return ""
    parts = [f"the paper counts {published} tests, {len(report.tests)} ran here"]
    skipped = Counter(skip_reason(test.message) for test in report.tests if test.outcome is Outcome.SKIPPED)
    if skipped:
        reasons = "; ".join(f"{reason} x{count}" if count > 1 else reason for reason, count in skipped.most_common())
        parts.append(f"{sum(skipped.values())} skipped ({reasons})")
    return ", ".join(parts)


def copy_defects(task: Task) -> list[str]:
    """Files the published benchmark has for `task` that its folder lacks ([] for a task of no published
    benchmark)."""
    dataset = find_published(task.format)
    return missing_from_copy(Path(task.root), manifest(dataset), task.id) if dataset is not None and task.root else []


def skip_reason(message: str) -> str:
    """The reason pytest gives for a skip (``('file.py', 12, 'Skipped: Win only test')`` -> ``Win only test``)."""
    found = SKIP_REASON.search(message)
    return (found.group(1) if found else message).strip()[:80] or "no reason given"


SKIP_REASON = re.compile(r"Skipped: ([^'\"\n]*)")


@dataclass(frozen=True)
class ReferenceUnit:
    """One task's reference against one of its suites; the test report goes to `report_path`."""

    key: str
    task: Task
    suite: SuiteName
    report_path: Path
    workspace_is_file = True  # the unit writes one file, not a folder (see `Relocatable`)

    @property
    def workspace(self) -> Path:
        """The one file the unit writes on the driver: its test report."""
        return self.report_path

    def relocated(self, workspace: Path, sync: Callable[[], None] | None = None) -> ReferenceUnit:
        """The unit writing its report to `workspace` (on a worker that does not see the driver's files)."""
        return replace(self, report_path=workspace)


@dataclass(frozen=True)
class ReferenceBatch(Batch[ReferenceUnit, SandboxRunner, BenchRow]):
    """Reference evaluations sharing one sandbox runner; a ledger line holds the row under ``row``.

    Sent to other processes, the batch carries the runner's settings instead (`for_workers`): each
    worker makes its own runner, logging to its stderr.
    """

    runner: SandboxRunner | None
    runner_settings: RunnerSettings | None = None

    def setup(self) -> SandboxRunner:
        if self.runner is not None:
            return self.runner
        from functools import partial

        return SandboxRunner(self.runner_settings, log=partial(print_progress, "sandbox"))

    def for_workers(self) -> ReferenceBatch:
        return ReferenceBatch(None, self.runner.settings if self.runner is not None else self.runner_settings)

    def received(self, unit: ReferenceUnit, row: BenchRow) -> BenchRow:
        return row.model_copy(update={"report": str(unit.report_path)}) if row.report else row

    def run(self, unit: ReferenceUnit, state: SandboxRunner) -> BenchRow:
        report = state.evaluate(unit.task, unit.task.reference_files(), unit.suite)
        report.write_json(unit.report_path)
        task = unit.task
        shipped = {*task.reference, *task.suite_files(unit.suite), *task.required_files}
        hidden = {path.split("/")[0] for name, suite in task.suites.items() if name != unit.suite
                  for path in suite.paths}
        return row_from_report(report, unit.report_path, shipped, task.expected_totals.get(unit.suite),
                               absent=copy_defects(task), hidden=hidden, known=known_defects(task),
                               published=published_tests(task) if unit.suite == task.scored_suite else None)

    def failed(self, unit: ReferenceUnit, reason: str) -> BenchRow:
        return BenchRow(task_id=unit.task.id, status="error", note=reason)

    def record(self, row: BenchRow) -> dict[str, Any]:
        return {"row": row.model_dump(mode="json")}

    def restore(self, entry: dict[str, Any]) -> BenchRow | None:
        return BenchRow.model_validate(entry["row"])


def bench_reference(
    dataset_dir: Path,
    runner: SandboxRunner,
    out_dir: Path,
    *,
    suite: SuiteName = "unit",
    executor: Executor | None = None,
    fresh: bool = False,
    tasks: Sequence[str] | None = None,
    on_start: Callable[[int, int], None] | None = None,  # (tasks to run, tasks resumed from the ledger)
    on_row: Callable[[BenchRow], None] | None = None,
) -> list[BenchRow]:
    """Run `suite` of every task against its own reference; resumes from the ledger in `out_dir`.

    `executor` runs the evaluations (default: `LocalExecutor()`, one at a time); `tasks` keeps only
    those task ids (an unknown one is an error). Returns one row per task, sorted by task id; a task
    that does not load, or has no reference or no such suite, is an error row that is not recorded in
    the ledger.
    """
    loaded, load_errors = load_tasks(Path(dataset_dir).resolve())  # absolute: workers elsewhere read them
    if tasks is not None:
        known = {task.id for task in loaded} | set(load_errors)
        unknown = sorted(set(tasks) - known)
        if unknown:
            raise ProjectGenError(f"unknown task(s) {', '.join(unknown)} in {dataset_dir} (tasks: "
                                  f"{', '.join(sorted(known))})")
        loaded = [task for task in loaded if task.id in tasks]
        load_errors = {task_id: reason for task_id, reason in load_errors.items() if task_id in tasks}
    claim_batch_folder(out_dir, "bench-reference")
    ledger = Ledger(out_dir / layout.LEDGER)
    if fresh:
        ledger.clear()
    rows = {task_id: BenchRow(task_id=task_id, status="error", note=reason) for task_id, reason in load_errors.items()}
    units: list[ReferenceUnit] = []
    for task in loaded:
        if not task.has_reference:
            rows[task.id] = BenchRow(task_id=task.id, status="error", note="task has no reference implementation")
        elif (own := task.role_suite(suite)) not in task.suites:  # "unit": the suite the task is scored by
            rows[task.id] = BenchRow(task_id=task.id, status="error", note=f"task has no {suite} tests")
        else:
            units.append(ReferenceUnit(key=f"{task.id}:{own}", task=task, suite=own,
                                       report_path=out_dir / layout.TEST_REPORTS / f"{task.id}.{own}.json"))
    done = run_batch(ReferenceBatch(runner), units, ledger, executor or LocalExecutor(),
                     on_start=on_start, on_row=on_row)
    rows.update({unit.task.id: done[unit.key] for unit in units})
    return [rows[key] for key in sorted(rows)]
