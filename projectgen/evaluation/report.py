"""Typed results of one sandboxed test run.

The runner counts tests, never exit codes: a suite can exit 1 with every test
passed (DevBench lice's coverage gate) or be killed with half its results in.
"""
from __future__ import annotations

import json
import re
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, Field

from projectgen.durable_files import write_atomic
from projectgen.evaluation.integrity_flags import IntegrityFlag
from projectgen.evaluation.metrics import pass_rate
from projectgen.evaluation.stable_output import WORKSPACE


PYTEST_NO_TESTS = 5
PYTEST_EXIT_MEANING = {2: "was interrupted", 3: "hit an internal error", 4: "could not start (usage error)"}


def _last_line(text: str) -> str:
    """The line of a run's output that says most: pytest's last `E ` line, else the last line naming an
    exception (pip's and Python's), else the last ERROR line (pytest's usage errors), else the last line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    marked = [line for line in lines if line.startswith("E ")]
    if marked:
        return re.sub(r"^E\s+", "", marked[-1])[:300]
    for line in reversed(lines):
        named = _EXCEPTION.search(line)
        if named:
            return named.group(0)[:300]
    chosen = [line for line in lines if line.startswith("ERROR")] or lines
    return chosen[-1][:300] if chosen else "(no output)"


_EXCEPTION = re.compile(r"\b[A-Za-z_][\w.]*(Error|Exception)\b:.*$")


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
    python: str = Field(description="the Python version the tests ran on")
    python_requested: str | None = Field(default=None, description="the task's pinned version, if any")
    path: str
    unsatisfied_requirements: list[str] = Field(default_factory=list)
    relaxed_pins: dict[str, str] = Field(
        default_factory=dict, description="a listed pin that does not install on this Python -> the nearest one "
        "installed instead (a task whose `EnvSpec.nearest_pins` is set: NL2Repo-Bench's)")
    plugins: list[str] = Field(default_factory=list)
    incomplete: list[str] = Field(
        default_factory=list, description="why the task's environment here is not its benchmark's, one line each "
        "('environment incomplete: ...': an asset not prepared, a declared shortfall); the same for every "
        "candidate of the task (evaluation.assets)")
    substituted: list[str] = Field(default_factory=list, description="data files this copy of the task lacks, "
                                   "put in from their declared source")

    @property
    def python_fallback(self) -> bool:
        """The task pinned a Python that was not found, so the tests ran on another one."""
        wanted = (self.python_requested or "").split(".")
        return bool(self.python_requested) and self.python.split(".")[: len(wanted)] != wanted


class ResourceUsage(BaseModel):
    """What the test processes of a run used, read by the sandbox's launcher from the kernel (the wait4
    rusage of each process it reaped), never from anything the code under test can write."""

    peak_memory_mb: float = Field(description="the largest peak resident size (RSS) of a test process, MiB")
    cpu_seconds: float = Field(description="user + system CPU time of every test process")
    wall_seconds: float = Field(description="wall time of the test step, from its start to its process's end")
    cpu_limit_cores: float | None = Field(
        default=None, description="the run's CPU quota in cores, read back from its cgroup (None: no quota could be set)")

    @property
    def cpu_percent(self) -> float | None:
        """The test processes' mean CPU use over the step, % of one core (None for a step of no time)."""
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else None


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
    install_error: str | None = Field(
        default=None, description="the task's install step failed on this candidate, so its tests did not run "
        "(the candidate's fault, unlike `error`); its output is in output_tail")
    output_tail: str = ""
    isolation: str = Field(default="", description='"namespaces", or "none": the score is not protected from '
                           "the code under test")
    tampered: str | None = Field(
        default=None, description="the code under test forged or tampered with the results (why); none of its "
        "tests counts as passed")
    environment: EnvironmentInfo | None = None
    usage: ResourceUsage | None = Field(
        default=None, description="what the pytest step's processes used (None when the sandbox did not see it "
        "end: stopped by the host or the launcher died; for another language's run, whose test step builds "
        "too; in an older report)")
    line_coverage: float | None = Field(
        default=None, description="line coverage (%) of the candidate's sources by this run, when the runner "
        "measured it (`SandboxRunner.reference_coverage`: ProjectGen's Table 2); None otherwise")
    coverage_problem: str | None = Field(
        default=None, description="why a run asked to measure line coverage has none (coverage.py missing from "
        "the task's environment, the run ended before pytest finished)")
    integrity_flags: list[IntegrityFlag] = Field(
        default_factory=list, description="constructs in the candidate that are known gaming moves, found "
        "statically (evaluation.integrity_flags): where a researcher should look; they never change the score "
        "(empty in an older report)")

    @property
    def unprotected(self) -> bool:
        """The tests ran without the sandbox's isolation: the code under test could have faked this score."""
        return self.isolation == "none"

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
        if self.unprotected:
            counts["protection"] = "unprotected (isolation none)"
        if self.tampered:
            counts["protection"] = f"tampered: {self.tampered}"
        return counts

    def not_run_reason(self) -> str | None:
        """Why no test ran, in one line (None when some did): the harness, the install step, a conftest
        that does not import, modules that do not collect, a pytest usage error, an empty suite."""
        if self.error:
            return self.error
        if self.install_error:
            return f"{self.install_error}: {_last_line(self.output_tail)}"
        if self.tests:
            return None
        if self.collection_errors:
            first = self.collection_errors[0]
            where = first.nodeid or "the test session"
            return (f"{len(self.collection_errors)} test module(s) could not be collected, none ran; "
                    f"{where}: {_last_line(first.message)}")
        if self.timed_out:
            return "the run timed out before any test ran"
        status, said = self.exit_status, _last_line(self.output_tail)
        if status is None:
            return f"the test process was stopped before any test ran: {said}"
        conftest = re.search(r"while loading conftest '([^']+)'", self.output_tail)
        if conftest:
            # relative to the workspace: shown as WORKSPACE (`stable_output`), by its session path in older reports
            where = re.sub(rf"^({re.escape(WORKSPACE)}|.*/projectgen-[^/]*/repo)/", "", conftest.group(1))
            return f"{where} does not import (pytest exit status {status}): {said}"
        if status == PYTEST_NO_TESTS:
            return f"pytest collected no tests (exit status {status})"
        if status in PYTEST_EXIT_MEANING:
            return f"pytest {PYTEST_EXIT_MEANING[status]} (exit status {status}): {said}"
        return f"the test process exited with status {status} before running any test: {said}"

    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if t.outcome in (Outcome.FAILED, Outcome.ERROR)]

    def write_json(self, path: Path) -> None:
        """Write the report atomically, with the summary beside the raw results."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = self.model_dump(mode="json")
        payload["summary"] = self.summary()

        write_atomic(path, json.dumps(payload, indent=2) + "\n")
