"""The tests a task is expected to run, and a candidate's score against them.

A candidate's own test run is a poor denominator: a test module that fails to import
shows up as one collection error instead of its N tests (inflating the pass rate exactly
where generated code is worst), and tests the suite itself skips or marks xfail can
never pass, so "every test passed" (LiveCoder's full score) would be unreachable. So the
denominator is fixed per task: the node ids the task's *reference* collects, measured once
through the sandbox and cached, or declared by the dataset (`Task.expected_tests`).

Pure functions and a small on-disk store; running the reference is the runner's job
(`SandboxRunner.expected_tests`, `SandboxRunner.score`).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from projectgen.datasets.assets import task_assets
from projectgen.datasets.task import SuiteName, Task
from projectgen.durable_files import write_atomic
from projectgen.errors import ProjectGenError
from projectgen.evaluation.languages.toolchains import PYTHON
from projectgen.evaluation.metrics import pass_rate
from projectgen.evaluation.report import Outcome, TestReport
from projectgen.evaluation.twins import Twin

# bump when measuring changes so cached expectations are measured again (2: tests an addopts `-m` deselects
# are no longer collected ones)
EXPECTATIONS_VERSION = 2
LANGUAGE_TWINS_VERSION = 2
"""Bump when deriving another language's twins changes: its expected tests are measured again (2: a variable also
used as an input is not followed to its value)."""
LANGUAGE_RUNS_VERSION = 3
"""Bump when running another language's tests changes what a reference's run gives, so its expected tests are measured
again (2: Java builds the code, then the tests against it; an import no jar provides is an environment shortfall;
3: a test file declaring no test owes no outcome, a Java helper class or a Rust helper module or empty target was a
collection error of the reference)."""
LEFT_OUT = {Outcome.SKIPPED: "skipped", Outcome.XFAIL: "xfail", Outcome.XPASS: "xfail"}
NOT_RUN = "not run"


class ExpectationError(ProjectGenError):
    """The expected tests of a task cannot be known (no reference and none declared, or it did not run)."""


class ReferenceEnvironmentError(ExpectationError):
    """The reference itself could not get what its tests need here (its dependencies: Go modules without the Go
    proxy, crates without crates.io): the task's environment is incomplete, so a candidate's result on it says
    nothing about the candidate. The message starts 'environment incomplete: '."""


@dataclass(frozen=True)
class ExpectationKey:
    """What a measurement depends on: a change to any part measures again."""

    task_id: str
    suite: str
    env_key: str
    inputs_digest: str  # hash of the suite's files, the reference and the test settings


class ExpectedTests(BaseModel):
    """The tests one suite of one task is expected to pass, grouped by test file.

    Measured from the reference: every test it collects, except those it skips or that are
    marked xfail (listed in `left_out`; they cannot tell a good candidate from a bad one).
    Tests the reference itself fails stay expected: the harness cannot know they are wrong,
    so no candidate can reach a full score there; they are listed in `reference_not_passed`
    for reports to show. A test module the reference cannot collect contributes nothing
    (its tests are unknown) and is listed in `reference_collection_errors`.
    """

    model_config = ConfigDict(frozen=True)

    version: int = EXPECTATIONS_VERSION
    task_id: str
    suite: str
    source: Literal["reference", "dataset"]
    env_key: str = ""
    inputs_digest: str = ""
    modules: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="test file -> node ids")
    left_out: dict[str, str] = Field(default_factory=dict, description="node id -> 'skipped' or 'xfail'")
    reference_not_passed: dict[str, str] = Field(
        default_factory=dict, description="expected node id -> the reference's outcome (failed, error, not run)")
    reference_collection_errors: tuple[str, ...] = ()
    complete: bool = Field(default=True, description="the reference run finished (not timed out, not read as "
                           "tampered); an incomplete measurement is not cached")
    twins: tuple[Twin, ...] | None = Field(
        default=None, description="copies of expected tests with a wrong expected value, verified to fail on the "
        "reference (`twins`); None: not derived yet (an entry cached before twins), derived when next needed")
    declared_total: int | None = Field(
        default=None, description="the benchmark's frozen test count (`[expected_total]`): the denominator instead "
        "of `count`; applied after measuring, never cached")

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(nodeid for ids in self.modules.values() for nodeid in ids)

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.modules.values())

    @property
    def denominator(self) -> int:
        """What #Pass is counted out of: the declared total when the benchmark froze one, else `count`."""
        return self.count if self.declared_total is None else self.declared_total

    def notes(self) -> list[str]:
        """What a report should say about this denominator, one line each."""
        notes = []
        if self.left_out:
            notes.append(f"{len(self.left_out)} test(s) the reference skips or marks xfail left out")
        if self.reference_not_passed:
            notes.append(f"the reference does not pass {len(self.reference_not_passed)} expected test(s): "
                         f"no candidate can reach a full score")
        if self.reference_collection_errors:
            notes.append("the reference cannot collect " + ", ".join(self.reference_collection_errors))
        if not self.complete:
            notes.append("the reference run did not finish: the expected tests may be too few")
        if self.declared_total is not None and self.declared_total != self.count and self.ids:
            notes.append(f"counted out of the declared total {self.declared_total} ({self.count} test(s) known): "
                         f"the {self.declared_total - self.count} the reference does not run count as failed")
        return notes


class TestScore(BaseModel):
    """A candidate's run scored against the expected tests (#Pass out of the expected count)."""

    model_config = ConfigDict(frozen=True)
    __test__ = False

    task_id: str
    suite: str
    passed: int = Field(description="#Pass: expected tests that passed")
    expected: int = Field(description="the expected test count: the denominator")
    failed: int = Field(description="expected tests that ran and did not pass (a candidate's skip included)")
    collection_failed: int = Field(description="expected tests counted failed because their file did not collect")
    missing: int = Field(description="expected tests with no result and no collection error (run killed, renamed)")
    extra: int = Field(description="tests the candidate ran that the reference did not collect (ignored)")
    left_out: int = Field(description="tests the reference skips or marks xfail (ignored)")
    source: Literal["reference", "dataset"]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float:
        return pass_rate(self.passed, self.expected)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def full_score(self) -> bool:
        """Every expected test passed (a task with no expected tests has no full score)."""
        return self.expected > 0 and self.passed == self.expected


def file_of(nodeid: str) -> str:
    """The file (module) part of a pytest node id."""
    return nodeid.split("::", 1)[0]


def group_by_file(nodeids: Iterable[str]) -> dict[str, tuple[str, ...]]:
    grouped: dict[str, list[str]] = {}
    for nodeid in nodeids:
        grouped.setdefault(file_of(nodeid), []).append(nodeid)
    return {path: tuple(ids) for path, ids in sorted(grouped.items())}


def covers(error_nodeid: str, nodeid: str) -> bool:
    """Whether a collection error at `error_nodeid` stands for test `nodeid`.

    Pytest reports the node it could not collect: almost always a file (every test in it),
    else a class inside a file (its tests), a folder or its conftest.py (every test below),
    or the whole session (empty id).
    """
    if "::" in error_nodeid:
        return nodeid == error_nodeid or nodeid.startswith((error_nodeid + "::", error_nodeid + "["))
    place = error_nodeid[: -len("conftest.py")].rstrip("/") if error_nodeid.endswith("conftest.py") else error_nodeid
    path = file_of(nodeid)
    return not place or path == place or path.startswith(place + "/")


def from_reference_report(report: TestReport, key: ExpectationKey) -> ExpectedTests:
    """The expected tests, read from the reference's own run (see `ExpectedTests`)."""
    if report.install_error:
        raise ReferenceEnvironmentError(f"environment incomplete: the reference's dependencies cannot be had here: "
                                        f"{report.install_error}")
    if report.error:
        raise ExpectationError(f"task {report.task_id!r}: the reference's {report.suite} tests did not run, "
                               f"so the expected tests are unknown: {report.not_run_reason()}")
    outcomes = {t.nodeid: t.outcome for t in report.tests}
    collected = list(dict.fromkeys([*report.collected_ids, *outcomes]))
    expected, left_out, not_passed = [], {}, {}
    for nodeid in collected:
        outcome = outcomes.get(nodeid)
        if outcome in LEFT_OUT:
            left_out[nodeid] = LEFT_OUT[outcome]
            continue
        expected.append(nodeid)
        if outcome is not Outcome.PASSED:
            not_passed[nodeid] = outcome.value if outcome else NOT_RUN
    return ExpectedTests(
        task_id=key.task_id, suite=key.suite, source="reference", env_key=key.env_key,
        inputs_digest=key.inputs_digest, modules=group_by_file(expected), left_out=left_out,
        reference_not_passed=not_passed,
        reference_collection_errors=tuple(e.nodeid for e in report.collection_errors),
        # a reference run read as tampered (a harness fault, e.g. a clock the tests froze) is never cached:
        # every later evaluation would count its "not passed" tests against each candidate
        complete=not report.timed_out and report.exit_status is not None and not report.tampered,
    )


def declared(task: Task, suite: SuiteName) -> ExpectedTests | None:
    """The expected tests the dataset declares for this suite, if it does."""
    ids = task.expected_tests.get(suite)
    if ids is None:
        return None
    return ExpectedTests(task_id=task.id, suite=suite, source="dataset", modules=group_by_file(dict.fromkeys(ids)))


def with_declared_total(task: Task, suite: SuiteName, expected: ExpectedTests) -> ExpectedTests:
    """`expected` counted out of the task's frozen total for `suite` (`[expected_total]`), when it declares one.
    More known tests than the total is a defect of the task, refused in one line (a ProjectGenError, not an
    ExpectationError that callers answer with another denominator): the frozen count would be wrong."""
    total = task.expected_totals.get(suite)
    if total is None:
        return expected
    if expected.count > total:
        raise ProjectGenError(f"task {task.id!r}: the reference collects {expected.count} {suite} test(s), more than "
                               f"[expected_total].{suite} = {total}")
    return expected.model_copy(update={"declared_total": total})


def declared_counts(report: TestReport, total: int) -> tuple[int, int, str]:
    """(#Pass, #Tests, a note) of a run counted out of a frozen total without knowing which tests it names: the
    tests that passed, out of `total`; tests the run lacks count as failed. A run with more tests than the
    total is capped at it and said in the note."""
    ran = len(report.tests) + len(report.collection_errors)
    note = f"{ran} test(s) ran, more than the declared total {total}: counted as {total}" if ran > total else ""
    return min(report.passed, total), total, note


def score_report(report: TestReport, expected: ExpectedTests) -> TestScore:
    """#Pass and the expected count of one run; see `TestScore` for each count.

    A collection error in a test file counts every expected test of that file as failed,
    whether or not the test then reported anything (an error in a class: the tests of that
    class); tests the reference did not collect are ignored (counted in `extra`). Under a declared
    total the tests it counts beyond the known ones are `missing` (failed); with no test known at all,
    the run's passed tests count (`declared_counts`).
    """
    if expected.declared_total is not None and not expected.ids:
        passed, total, _ = declared_counts(report, expected.declared_total)
        ran = len(report.tests)
        return TestScore(task_id=report.task_id, suite=report.suite, passed=passed, expected=total,
                         failed=min(ran, total) - passed, collection_failed=len(report.collection_errors),
                         missing=max(0, total - ran - len(report.collection_errors)), extra=max(0, ran - total),
                         left_out=0, source=expected.source)
    outcomes = {t.nodeid: t.outcome for t in report.tests}
    errors = [e.nodeid for e in report.collection_errors]
    passed = failed = collection_failed = missing = 0
    for nodeid in expected.ids:
        outcome = outcomes.get(nodeid)
        if any(covers(error, nodeid) for error in errors):
            collection_failed += 1
        elif outcome is Outcome.PASSED:
            passed += 1
        elif outcome is None:
            missing += 1
        else:
            failed += 1
    known = expected.ids | expected.left_out.keys()
    return TestScore(
        task_id=report.task_id, suite=report.suite, passed=passed, expected=expected.denominator, failed=failed,
        collection_failed=collection_failed, missing=missing + expected.denominator - expected.count,
        extra=sum(1 for n in outcomes if n not in known),
        left_out=len(expected.left_out), source=expected.source,
    )


def expected_counts(runner: Any, task: Task, report: TestReport) -> tuple[int, int, str]:
    """(#Pass, denominator, what the denominator counts) of one run: over the task's expected tests of the
    report's suite ("expected") when `runner` can tell them (`SandboxRunner.expected_tests`), out of the
    benchmark's frozen total when the task declares one ("declared", `[expected_total]`), else over the
    tests that ran ("run": no reference and none declared, or a runner without expectations)."""
    expected_tests = getattr(runner, "expected_tests", None)
    if expected_tests is not None:
        try:
            expected = expected_tests(task, report.suite)
        except ExpectationError:
            pass
        else:
            score = score_report(report, expected)
            return score.passed, score.expected, "expected" if expected.declared_total is None else "declared"
    if (total := task.expected_totals.get(report.suite)) is not None:
        passed, total, _ = declared_counts(report, total)
        return passed, total, "declared"
    return report.passed, report.total, "run"


# --------------------------------------------------------------------------- the on-disk cache


def expectation_key(task: Task, suite: SuiteName) -> ExpectationKey:
    """The cache key of a measurement: task, suite, environment and a digest of what it ran."""
    digest = hashlib.sha256(f"v{EXPECTATIONS_VERSION}\n".encode())
    settings: dict[str, Any] = {"env_vars": task.env.env_vars, "pytest_plugins": task.env.pytest_plugins}
    # What else shapes the reference's run; named only when set, so earlier measurements keep their keys.
    for name, value in (("source_root", task.env.source_root), ("install", task.env.install),
                        ("empty_dirs", list(task.empty_dirs)), ("workdir", task.env.workdir),
                        ("pytest_options", task.env.pytest_options)):
        if value:
            settings[name] = value
    assets = task_assets(task)  # files and models put in its workspace: the reference may collect more with them
    if assets.data or assets.models:
        settings["assets"] = [*(f"{data.path}={data.sha256}" for data in assets.data),
                              *(model.repo for model in assets.models)]
    if task.language != PYTHON:  # measured again: entries cached before these languages had twins hold none
        settings["language_twins"] = LANGUAGE_TWINS_VERSION
        settings["language_runs"] = LANGUAGE_RUNS_VERSION
    digest.update(json.dumps(settings, sort_keys=True).encode())
    digest.update(_files_digest({rel: task.root / rel for rel in task.suite_files(suite)}))
    digest.update(_files_digest(task.reference_files()))
    return ExpectationKey(task.id, suite, task.env.cache_key(), digest.hexdigest()[:16])


def _files_digest(files: Mapping[str, Path]) -> bytes:
    """Each path (as the tests see it) and its content, in path order."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256(files[rel].read_bytes()).digest())
    return digest.digest()


class ExpectationStore:
    """Measured expectations as one JSON file per key, written atomically, measured under a lock."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, key: ExpectationKey) -> Path:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", key.task_id)
        tag = hashlib.sha256(key.task_id.encode()).hexdigest()[:6]  # ids that clean up alike stay apart
        return self.root / f"{name}-{tag}" / f"{key.suite}-{key.env_key}-{key.inputs_digest}.json"

    def load(self, key: ExpectationKey) -> ExpectedTests | None:
        path = self.path_for(key)
        try:
            found = ExpectedTests.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        wanted = (EXPECTATIONS_VERSION, key.task_id, key.suite, key.env_key, key.inputs_digest)
        return found if (found.version, found.task_id, found.suite, found.env_key, found.inputs_digest) == wanted \
            else None

    def save(self, expected: ExpectedTests) -> Path:
        key = ExpectationKey(expected.task_id, expected.suite, expected.env_key, expected.inputs_digest)
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, expected.model_dump_json(indent=2) + "\n")
        return path

    @contextmanager
    def locked(self, key: ExpectationKey) -> Iterator[None]:
        """One measurement of a key at a time, across processes (parallel experiment workers)."""
        path = self.path_for(key).with_suffix(".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


@dataclass(frozen=True)
class ScoredRun:
    """A candidate's test report and its score against the expected tests."""

    report: TestReport
    score: TestScore
    expected: ExpectedTests
