"""Typed results of one sandboxed test run.

The runner counts tests, never exit codes: a suite can exit 1 with every test
passed (DevBench lice's coverage gate) or be killed with half its results in.
"""
from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, Field

from projectgen.evaluation.metrics import pass_rate


class Outcome(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAIL = "xfail"
    XPASS = "xpass"


class TestResult(BaseModel):
    """One test's final outcome (setup, call and teardown combined)."""

    __test__ = False

    nodeid: str
    outcome: Outcome
    duration: float = 0.0
    message: str = ""


class CollectionError(BaseModel):
    """A test module pytest could not import or collect."""

    nodeid: str
    message: str = ""


class EnvironmentInfo(BaseModel):
    key: str
    python: str
    path: str
    unsatisfied_requirements: list[str] = Field(default_factory=list)
    plugins: list[str] = Field(default_factory=list)


class TestReport(BaseModel):
    """Everything one run of one suite tells: per-test outcomes and how the run ended."""

    __test__ = False

    task_id: str
    suite: str
    tests: list[TestResult] = Field(default_factory=list)
    collection_errors: list[CollectionError] = Field(default_factory=list)
    collected: int | None = Field(default=None, description="items pytest collected, if collection finished")
    collected_ids: list[str] = Field(
        default_factory=list, exclude=True,
        description="node ids of the collected items, for measuring expected tests; not written to JSON "
        "(a report read back from a file has none)",
    )
    duration: float = 0.0
    exit_status: int | None = None
    timed_out: bool = False
    error: str | None = Field(default=None, description="why the harness could not run the tests at all")
    output_tail: str = ""
    isolation: str = ""
    environment: EnvironmentInfo | None = None

    def count(self, outcome: Outcome) -> int:
        return sum(1 for t in self.tests if t.outcome is outcome)

    @property
    def passed(self) -> int:
        return self.count(Outcome.PASSED)

    @property
    def total(self) -> int:
        """Tests that ran or should have, plus one per module that failed to collect."""
        return max(len(self.tests), self.collected or 0) + len(self.collection_errors)

    @property
    def pass_rate(self) -> float:
        return pass_rate(self.passed, self.total)

    @property
    def status(self) -> str:
        """A one-word verdict for tables: passed, failed, timeout, error."""
        if self.error:
            return "error"
        if self.timed_out:
            return "timeout"
        if self.total and self.passed == self.total - self.count(Outcome.SKIPPED) - self.count(Outcome.XFAIL):
            return "passed"
        return "failed" if self.total else "error"

    def summary(self) -> dict[str, int | float | str]:
        counts: dict[str, int | float | str] = {o.value: self.count(o) for o in Outcome}
        counts.update(
            collection_errors=len(self.collection_errors),
            total=self.total,
            pass_rate=round(self.pass_rate, 4),
            status=self.status,
        )
        return counts

    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if t.outcome in (Outcome.FAILED, Outcome.ERROR)]

    def write_json(self, path: Path) -> None:
        """Write the report atomically, with the summary beside the raw results."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = self.model_dump(mode="json")
        payload["summary"] = self.summary()
        from projectgen.durable_files import write_atomic

        write_atomic(path, json.dumps(payload, indent=2) + "\n")
