"""Run these tests on this code in the sandbox and say, per test, what happened.

Construction keeps or drops generated tests and solutions by executing them, so it needs one small
step the evaluation package does not have as such: a task's *new* test files (not yet on disk in the
task) run against a candidate repository. `execute` copies the task's folder into a scratch folder,
writes the test files there as a suite of their own and hands that task to the `SandboxRunner`, in any
language the runner supports; the code under test runs only in the sandbox.
"""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.datasets.task import Task, TestSuite
from projectgen.evaluation.report import Outcome, TestReport
from projectgen.evaluation.runner import SandboxRunner
from projectgen.repository import SKIPPED_DIRS, safe_relpath

SUITE = "construct"
"""The name of the suite the new test files form (never one of the task's own)."""
WORK = ".construct"
"""The folder a construct command keeps its run in (inside a task folder for check tests): never copied."""


@dataclass(frozen=True)
class Execution:
    """One run of some tests on some code: per-test outcomes, or why the run says nothing about either.

    `anomaly` is set when the run cannot be read as passes and failures of the tests (a timeout, a build or
    collection error, the harness failing): construction drops such a pair instead of counting it."""

    outcomes: dict[str, str] = field(default_factory=dict)
    anomaly: str | None = None

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def passed(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome == Outcome.PASSED.value)

    @property
    def pass_rate(self) -> float:
        """Passed / run (0.0 when nothing ran)."""
        return self.passed / self.total if self.total else 0.0

    @property
    def all_passed(self) -> bool:
        return self.anomaly is None and self.total > 0 and self.passed == self.total

    def to_dict(self) -> dict[str, object]:
        return {"passed": self.passed, "total": self.total, "anomaly": self.anomaly, "outcomes": self.outcomes}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Execution:
        outcomes = data.get("outcomes") or {}
        anomaly = data.get("anomaly")
        return cls(outcomes=dict(outcomes) if isinstance(outcomes, Mapping) else {},
                   anomaly=str(anomaly) if anomaly is not None else None)


def execute(runner: SandboxRunner, task: Task, code: Mapping[str, str], tests: Mapping[str, str]) -> Execution:
    """Run `tests` (path relative to the task's root -> text) on `code` (repository path -> text) as the
    task lays code out, in the sandbox. The task's own suites are not run."""
    if not tests:
        return Execution(anomaly="no test files")
    with tempfile.TemporaryDirectory(prefix="projectgen-construct-") as scratch:
        root = Path(scratch) / "root"
        shutil.copytree(task.root, root, symlinks=False,
                        ignore=shutil.ignore_patterns(*SKIPPED_DIRS, "target", "build", WORK))
        paths = []
        for rel, text in tests.items():
            clean = safe_relpath(rel)
            (root / clean).parent.mkdir(parents=True, exist_ok=True)
            (root / clean).write_text(text, encoding="utf-8")
            paths.append(clean)
        staged = task.model_copy(update={"root": root, "suites": {SUITE: TestSuite(name=SUITE, paths=tuple(paths))},
                                         "scored_suite": SUITE, "expected_tests": {}})
        report = runner.evaluate(staged, dict(code), SUITE)
    return from_report(report)


def from_report(report: TestReport) -> Execution:
    """What a test report says per test, or the anomaly that makes it say nothing."""
    outcomes = {test.nodeid: test.outcome.value for test in report.tests}
    if report.error:
        return Execution(outcomes, f"harness: {report.error.splitlines()[0][:200]}")
    if report.timed_out:
        return Execution(outcomes, "timeout")
    if report.tampered:
        return Execution(outcomes, f"tampered: {report.tampered[:200]}")
    if report.install_error:
        return Execution(outcomes, f"build: {report.install_error.splitlines()[0][:200]}")
    if report.collection_errors:
        first = report.collection_errors[0]
        return Execution(outcomes, f"build: {first.nodeid}: {(first.message.splitlines() or [''])[0][:200]}")
    if not outcomes:
        return Execution(outcomes, "no test ran")
    return Execution(outcomes)
