"""Evaluate every task's reference implementation: the harness checking itself.

A reference that fails its own tests means a broken task or a broken harness;
either must be visible before any generated repository is scored against it.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from pydantic import BaseModel

from projectgen.datasets.loaders import load_dataset_report
from projectgen.datasets.task import SuiteKind, Task
from projectgen.evaluation.report import TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.experiments.ledger import Ledger
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


def row_from_report(report: TestReport, report_path: Path | None) -> BenchRow:
    notes = []
    if report.error:
        notes.append(report.error)
    if report.collection_errors:
        notes.append(f"{len(report.collection_errors)} collection error(s): {report.collection_errors[0].nodeid}")
    if report.environment and report.environment.unsatisfied_requirements:
        notes.append("not installed: " + ", ".join(report.environment.unsatisfied_requirements))
    return BenchRow(
        task_id=report.task_id, status=report.status, passed=report.passed, total=report.total,
        pass_rate=report.pass_rate, duration=round(report.duration, 1), note="; ".join(notes),
        report=str(report_path) if report_path else None,
    )


def bench_reference(
    dataset_dir: Path,
    runner: SandboxRunner,
    out_dir: Path,
    *,
    suite: SuiteKind = "unit",
    workers: int = 1,
    fresh: bool = False,
    on_start: Callable[[int, int], None] | None = None,  # (tasks to run, tasks resumed from the ledger)
    on_row: Callable[[BenchRow], None] | None = None,
) -> list[BenchRow]:
    """Run `suite` of every task against its own reference; resumes from the ledger in `out_dir`."""
    tasks, load_errors = load_dataset_report(dataset_dir)
    ledger = Ledger(out_dir / layout.LEDGER)
    if fresh and ledger.path.exists():
        ledger.path.unlink()
    done = {key: BenchRow.model_validate(entry["row"]) for key, entry in ledger.done().items()}
    rows: dict[str, BenchRow] = {}
    for error in load_errors:
        task_id = error.path.parent.name if error.path.name in ("config.json", "task.toml") else error.path.name
        rows[task_id] = BenchRow(task_id=task_id, status="error", note=str(error))
    pending: list[Task] = []
    resumed = 0
    for task in tasks:
        key = f"{task.id}:{suite}"
        if key in done:
            rows[task.id] = done[key]
            resumed += 1
        elif not task.has_reference:
            rows[task.id] = BenchRow(task_id=task.id, status="error", note="task has no reference implementation")
        elif suite not in task.suites:
            rows[task.id] = BenchRow(task_id=task.id, status="error", note=f"task has no {suite} tests")
        else:
            pending.append(task)
    if on_start:
        on_start(len(pending), resumed)

    def evaluate(task: Task) -> BenchRow:
        report = runner.evaluate(task, task.reference_files(), suite)
        report_path = out_dir / "reports" / f"{task.id}.{suite}.json"
        report.write_json(report_path)
        return row_from_report(report, report_path)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(evaluate, task): task for task in pending}
        for future in as_completed(futures):
            task = futures[future]
            try:
                row = future.result()
            except Exception as exc:  # one broken task must not end the bench
                row = BenchRow(task_id=task.id, status="error", note=f"{type(exc).__name__}: {exc}")
            ledger.append(f"{task.id}:{suite}", row=row.model_dump(mode="json"))
            rows[task.id] = row
            if on_row:
                on_row(row)
    return [rows[key] for key in sorted(rows)]
