"""Run a task's tests against a candidate repository, in a sandbox, and read the results.

Each run gets a fresh session folder (`sandbox_session.SessionFolder`): its workspace holds
the candidate's files first, then the task's fixtures and test suite on top (a candidate's
test files, conftest files and test fixtures are dropped, so generated code can never replace
or add to the tests; `protected_paths` says which; its other files stay, also beside the
tests), with this run's twins and canaries planted into copies of the suite's own modules
(`planted_tests`, `twins`: tests that must fail, known to the runner only; a module of canaries,
`results_channel.Canary`, where nothing can be planted; another language's suite gets its twins in its
test files, `languages.planting`, and its canary from `languages.session`). In the sandbox the workspace is a copy on the
session's own capped disk, and the suite is read-only (a folder of tests as a whole, else its Python files:
`protected_paths.suite_mounts`). pytest starts through `pytest_bootstrap` in the task's cached environment, with our
recorder in place before any candidate file can be imported, a config file and rootdir chosen
by us (the task's own flags are not used), plugin autoloading off, conftest lookup cut at the
suite's folder, a timeout the sandbox's launcher enforces, resource limits, and no network.
Outcomes come back signed through a pipe (`results_channel`); output through another, of which
only the end is kept; a run that prints more than the output limit is stopped. pytest's terminal is
silent (it would name the planted tests): the output a model is shown is written from the events. docs/sandbox.md
has the threat model.

What a task may ask of a workspace: its empty folders (`Task.empty_dirs`),
`{repo}` in its environment variables (the workspace's path), a source root put
first on the import path, and an install step (`EnvSpec.install`) run in the same
sandbox session before pytest, with no suite in the workspace (the launcher mounts it once the
install and everything it started are gone). The install never touches the shared, cached environment:
pip installs offline, without build isolation (with the environment's own
setuptools) and with `--prefix` into the session's install folder, whose
site-packages the bootstrap (and, for processes the tests start, a `sitecustomize`) adds
(with its `.pth` files, so editable installs work) and whose `bin` goes first on PATH. A
failed install is the candidate's failure (`TestReport.install_error`): its tests do not run.
"""
from __future__ import annotations

import ast
import contextlib
import fnmatch
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.datasets.assets import ASSETS_FILE, load_assets, task_assets
from projectgen.datasets.pytest_config import pytest_ini_text
from projectgen.datasets.task import EnvSpec, SuiteName, Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.assets import AssetCache, PreparedAssets, environment_notes
from projectgen.evaluation.cleanup import sweep_leftovers
from projectgen.evaluation.environments import Environment, EnvironmentBuildError, EnvironmentCache
from projectgen.evaluation.expectations import (
    ExpectationError,
    ExpectationKey,
    ExpectationStore,
    ExpectedTests,
    ReferenceEnvironmentError,
    ScoredRun,
    declared,
    expectation_key,
    file_of,
    from_reference_report,
    score_report,
    with_declared_total,
)
from projectgen.evaluation.integrity_flags import ScannedFiles, candidate_flags
from projectgen.evaluation.languages.plans import PLANS
from projectgen.evaluation.languages.planting import plan_twins
from projectgen.evaluation.languages.session import evaluate_in_language, suite_sources
from projectgen.evaluation.languages.toolchains import PYTHON, Toolchain, probe_toolchain
from projectgen.evaluation.languages.twins import suite_twins
from projectgen.evaluation.planted_tests import (ModuleOutlines, PlantedTest, Planting, plan, planted_problem,
                                                without_planted)
from projectgen.evaluation.protected_paths import ProtectedPaths, suite_mounts
from projectgen.evaluation.recent_runs import RecentRuns
from projectgen.evaluation.report import (CollectionError, EnvironmentInfo, Outcome, ResourceUsage, TestReport,
                                         TestResult)
from projectgen.evaluation.results_channel import Canary, hidden_tests_problem
from projectgen.evaluation.sandbox import NAMESPACES, Containment, Limits, RunCgroup, compile_recorder, sandbox_file
from projectgen.evaluation.sandbox_probe import probe_containment
from projectgen.evaluation.stable_output import (ENVIRONMENT, HARNESS, INTERPRETER, SESSION, WORKSPACE, StablePaths,
                                                 message_tail, printed_tail, stable_text)
from projectgen.evaluation.twins import Twin, choose_twins, derive_twins
from projectgen.evaluation.workspace import Candidate, copy_candidate, copy_prepared_files, copy_task_files
from projectgen.evaluation.sandbox_session import (
    DIED,
    FINISHED,
    OUTPUT_LIMIT,
    OUTPUT_TAIL_CHARS,
    TIMED_OUT,
    SessionFolder,
    SessionResult,
    Step,
    StepResult,
    run_session,
    with_suite_problem,
)

DEFAULT_TIMEOUT = 300.0
# What the host keeps of the end of the test step's output, in bytes: ten times what is shown (OUTPUT_TAIL_CHARS),
# so the shown end is cut after the paths in it are made stable (`stable_output`: a path shrinks to a fifth at
# most), never where the lengths of the session's paths put the host's cut.
PRINTED_KEEP = 64 * 1024
CANARIES = 2  # canary tests planted per run into the suite's modules
TWINS = 3  # twins planted per run by default
TESTS_PER_TWIN = 8  # a small suite gets fewer twins: they cost a run of the tests they copy
TWIN_CANDIDATES = 60  # twins tried on the reference, at most; the verified ones are cached
# Suites whose time and resources are scored (nonfunctional.DIMENSION_SUITES' efficiency and resource): a random
# choice of twins would make those figures vary from run to run, so they get canaries only.
MEASURED_SUITES = frozenset({"performance", "resource"})
TWIN_SECONDS = 1.0  # a twin slower than this on the reference is not kept: every run would pay for it
DEFAULT_TEST_FILES = ("test_*.py", "*_test.py")
NAMING_OPTIONS = ("python_files", "python_functions", "python_classes")
REPO_PLACEHOLDER = "{repo}"
# pip reads its `--no-*` switches from the environment inverted: PIP_NO_BUILD_ISOLATION=0 turns isolation off.
INSTALL_VARIABLES = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                     "PIP_NO_INPUT": "1"}
# The test process: `python -I` (no PYTHON* variable, no user site, not the script's folder nor the working
# folder on sys.path), `-B` (PYTHONDONTWRITEBYTECODE is one of those variables), the bootstrap imported from
# its read-only folder, which this puts first on sys.path (the bootstrap's `main` takes it off again).
BOOTSTRAP = ("import sys; folder = sys.argv.pop(1); sys.path.insert(0, folder); "
             "sys.argv[0] = folder + '/pytest_bootstrap.py'; import pytest_bootstrap as bootstrap; "
             "bootstrap.end(bootstrap.main(sys.argv[1:]))")


@dataclass
class RunnerSettings:
    """How tests are run; defaults suit hundreds of untrusted runs on a small machine."""

    timeout: float | None = None  # seconds per run; None: the task's own timeout, else DEFAULT_TIMEOUT
    limits: Limits = field(default_factory=Limits)
    isolation: str = "auto"  # "auto" | "namespaces" | "none"
    cache_dir: Path | None = None
    expectations_dir: Path | None = None  # measured expected tests (default: `expected-tests` in the env cache)
    assets_dir: Path | None = None  # prepared data files and models (default: `assets` in the env cache)
    assets_file: Path | None = None  # the tasks' declared assets (default: the packaged datasets/assets.toml)
    workdir: Path | None = None  # where session folders are created (default: system temp)
    keep_workspace: bool = False  # keep the session folder: what the tests were given (not what they wrote)
    use_uv: bool = True
    install_timeout: float = 1800.0
    twins: int | None = None  # twins planted per run (`twins`; as many as verified at most); None: TWINS, and
    # one per TESTS_PER_TWIN expected tests in a smaller suite


class SandboxRunner:
    """Evaluates candidate repositories against a task's check, unit or acceptance tests."""

    def __init__(self, settings: RunnerSettings | None = None, log: Callable[[str], None] | None = None,
                 slots: threading.Semaphore | None = None) -> None:
        """`slots`: sandbox runs at once, shared with the other runners of a batch (one per worker thread,
        and a batch may run more threads than cores when they mostly wait on a model); None: no cap."""
        self.settings = settings or RunnerSettings()
        self.slots = slots
        self.log = log or (lambda message: None)
        self.environments = EnvironmentCache(
            self.settings.cache_dir,
            install_timeout=self.settings.install_timeout,
            use_uv=self.settings.use_uv,
            log=self.log,
        )
        self.assets = AssetCache(self.settings.assets_dir or self.environments.root / "assets")
        self._prepared: dict[tuple[str, str], tuple[PreparedAssets, list[str]]] = {}  # per task, for the runner's life
        self._preparing = threading.Lock()
        self._containment: Containment | None = None
        self._toolchains: dict[str, Toolchain] = {}
        self.recent = RecentRuns()
        self._planting_expected: dict[ExpectationKey, ExpectedTests | None] = {}  # per key, for this runner's life
        self._reference_incomplete: dict[ExpectationKey, str] = {}  # why a reference cannot get its dependencies
        self._outlines = ModuleOutlines()  # the suites' modules, parsed once for every run's planting
        self._scanned = ScannedFiles()  # the candidates' files, scanned once for their integrity flags

    # -- isolation -----------------------------------------------------------------
    def containment(self) -> Containment:
        """What the sandbox enforces here; probed once (after sweeping what dead runners left), and what is
        not contained is said once."""
        if self._containment is None:
            for leftover in sweep_leftovers(self.settings.workdir):
                self.log(f"removed the leftovers of a runner that died: {leftover}")
            wanted = self.settings.isolation
            with tempfile.TemporaryDirectory(prefix="projectgen-probe-") as scratch:
                found = probe_containment(wanted, Path(scratch))
            if found.isolation != NAMESPACES and wanted == NAMESPACES:
                raise ProjectGenError(f"sandbox isolation 'namespaces' requested but unavailable: {found.notes[0]}")
            for note in found.notes:
                self.log(f"warning: {note}")
            if found.isolation != NAMESPACES and wanted != NAMESPACES and not found.notes:
                self.log("warning: --isolation none: the code under test runs unprotected, and so is every score")
            self._containment = found
        return self._containment

    def isolation(self) -> str:
        """The isolation level in use ("namespaces" or "none")."""
        return self.containment().isolation

    def toolchain(self, language: str) -> Toolchain:
        """The toolchain of `language` on this machine, probed once per runner."""
        if language not in self._toolchains:
            self._toolchains[language] = probe_toolchain(language)
        return self._toolchains[language]

    def timeout_for(self, task: Task, suite: SuiteName | None = None) -> float:
        """Seconds one run of `suite` of `task` may take: the runner's timeout when set (a user's `--timeout`
        wins), else the task's `[timeouts]` entry for the suite, else its `timeout`, else DEFAULT_TIMEOUT."""
        if self.settings.timeout is not None:
            return self.settings.timeout
        if suite is not None and suite in task.suite_timeouts:
            return task.suite_timeouts[suite]
        return task.timeout if task.timeout is not None else DEFAULT_TIMEOUT

    def install_timeout_for(self, task: Task, suite: SuiteName) -> float:
        """Seconds the candidate's install step may take: the runner's timeout when set, else the task's
        `install_timeout`, else the suite's own timeout (a slow build need not slow every test run's limit)."""
        if self.settings.timeout is None and task.install_timeout is not None:
            return task.install_timeout
        return self.timeout_for(task, suite)

    def prepared_assets(self, task: Task, env: Environment) -> tuple[PreparedAssets, list[str]]:
        """The task's declared data files and models, prepared outside the sandbox once per runner, and why its
        environment (`env`, built) is not its benchmark's: 'environment incomplete: ...' lines, none for most
        tasks, said once here and carried by every report of the task (`EnvironmentInfo.incomplete`)."""
        key = (str(task.root), task.id)
        with self._preparing:
            if key not in self._prepared:
                assets = task_assets(task, load_assets(self.settings.assets_file or ASSETS_FILE))
                prepared = self.assets.prepare(task, assets)
                notes = environment_notes(task, assets, prepared, unsatisfied=env.unsatisfied)
                self._prepared[key] = (prepared, notes)
                for line in notes:  # said once, before any test of the task runs
                    self.log(f"{task.id}: {line}")
            return self._prepared[key]

    # -- public API ----------------------------------------------------------------
    def evaluate(self, task: Task, candidate: Candidate, suite: SuiteName | None = None) -> TestReport:
        """Run one suite of `task` against `candidate` (default: the suite it is scored by, `scored_suite`).

        `candidate` is a folder, or a mapping from repository path to file text
        (or to a file on disk to copy, which keeps binary files intact). The same suite asked again
        for the same files (a mapping of texts) gets the report of the run just made (`RecentRuns`).
        """
        suite = suite or task.scored_suite
        task.suite(suite)
        key = RecentRuns.key(task.id, str(task.root), suite, candidate)
        if key is not None and (known := self.recent.get(key)) is not None:
            return known
        expected = self._planting_expectations(task, suite)  # the first time, measures the reference (in a slot)
        with self._slot():
            return self.run_suite(task, candidate, suite, key, expected)

    def _slot(self) -> contextlib.AbstractContextManager:
        return self.slots if self.slots is not None else contextlib.nullcontext()

    def run_suite(self, task: Task, candidate: Candidate, suite: SuiteName, key: str | None,
                  expected: ExpectedTests | None = None) -> TestReport:
        """`evaluate`'s run, not answered from the recent runs (`key`: where its report is kept for them);
        `expected`: the measured expected tests, whose modules get the run's twins and canaries."""
        started = time.monotonic()
        if task.language != PYTHON:
            report = self._language_run(task, candidate, suite, self._planting(task, suite, expected))
            report.duration = time.monotonic() - started
            report.integrity_flags = candidate_flags(task, candidate, self._scanned)
            if key is not None and not report.error:
                self.recent.put(key, report)
            return report
        try:
            env = self.environments.ensure(task.env)
        except EnvironmentBuildError as exc:
            return TestReport(task_id=task.id, suite=suite, error=f"the test environment could not be built: {exc}",
                              duration=time.monotonic() - started)
        report = self._python_run(task, candidate, suite, env, self._planting(task, suite, expected),
                                  self.prepared_assets(task, env))
        report.duration = time.monotonic() - started
        report.integrity_flags = candidate_flags(task, candidate, self._scanned)
        if key is not None:
            self.recent.put(key, report)
        return report

    def _python_run(self, task: Task, candidate: Candidate, suite: SuiteName, env: Environment,
                    planting: Planting, prepared: tuple[PreparedAssets, list[str]],
                    coverage_of: Sequence[str] = ()) -> TestReport:
        """One sandboxed pytest run with `planting`'s tests in the suite's modules and `prepared`'s assets (with
        the notes of what is missing); with `coverage_of` (the candidate's top-level folders and modules), the
        line coverage of those files too (`TestReport.line_coverage`)."""
        self.containment()
        compile_recorder(env.python_version)
        folder = SessionFolder.create(self.settings.workdir, task.id)
        try:
            return self._run(folder, task, suite, env, candidate, planting, prepared, coverage_of)
        finally:
            if not self.settings.keep_workspace:
                folder.remove()

    def _language_run(self, task: Task, candidate: Candidate, suite: SuiteName, planting: Planting) -> TestReport:
        """One sandboxed run of a suite in another language than Python, with `planting`'s twins in its test files."""
        return evaluate_in_language(
            task, candidate, suite, toolchain=self.toolchain(task.language), containment=self.containment(),
            limits=self.settings.limits, timeout=self.timeout_for(task, suite),
            cache=self.environments.root / "languages", workdir=self.settings.workdir,
            keep_workspace=self.settings.keep_workspace, planting=planting)

    def expected_tests(self, task: Task, suite: SuiteName | None = None, *, refresh: bool = False) -> ExpectedTests:
        """The tests `suite` is expected to pass: declared by the dataset, else measured by running
        the reference once and cached per (task, suite, environment, test files); counted out of the
        task's frozen total when it declares one (`[expected_total]`)."""
        suite = suite or task.scored_suite
        task.suite(suite)
        given = declared(task, suite)
        if given is not None:
            if task.has_reference:
                self._check_declared(task, suite, given)
            return with_declared_total(task, suite, given)
        if task.has_reference:
            return with_declared_total(task, suite, self._measured(task, suite, refresh=refresh))
        if suite in task.expected_totals:  # no test known: the run's passed tests, out of the frozen total
            return with_declared_total(task, suite, ExpectedTests(task_id=task.id, suite=suite, source="dataset"))
        raise ExpectationError(f"task {task.id!r} has no reference and declares no expected {suite} tests")

    def _check_declared(self, task: Task, suite: SuiteName, given: ExpectedTests) -> None:
        """A declared test the reference does not collect names no real test: every candidate would fail it
        and score a silent 0 for it, so it is refused in one line."""
        measured = self._measured(task, suite, refresh=False)
        collected = measured.ids | measured.left_out.keys()
        unknown = sorted(nodeid for nodeid in given.ids if nodeid not in collected)
        if unknown:
            shown = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
            raise ExpectationError(f"task {task.id!r}: [expected_tests].{suite} names {len(unknown)} test(s) its "
                                   f"reference does not collect: {shown}")

    def _measured(self, task: Task, suite: SuiteName, *, refresh: bool) -> ExpectedTests:
        """The expected tests measured by running the reference once, cached per (task, suite, environment, tests),
        with their twins (an entry cached before twins gets them the first time it is read)."""
        key = expectation_key(task, suite)
        store = self._expectation_store()
        with store.locked(key):
            cached = None if refresh else store.load(key)
            if cached is not None and cached.twins is not None:
                return cached
            if cached is None:
                self.log(f"measuring the expected {suite} tests of {task.id} by running its reference")
                at_once = self._measured_with_twins(task, suite, key)
                if at_once is not None:
                    store.save(at_once)
                    return at_once
                measured = from_reference_report(self._reference_run(task, suite, self._planting(task, suite, None)),
                                                 key)
            else:
                measured = cached
            if not measured.complete:
                return measured
            measured = measured.model_copy(update={"twins": self._verified_twins(task, suite, measured)})
            store.save(measured)
        return measured

    def _measured_with_twins(self, task: Task, suite: SuiteName, key: ExpectationKey) -> ExpectedTests | None:
        """The expected tests and their verified twins from ONE run of the reference, with every twin candidate
        (`TWIN_CANDIDATES` at most) planted beside the canaries: the run that measures the tests also tries the
        twins, instead of a second run. It can tell only when every real test passed there (a twin that left
        state behind and changed one would otherwise pass for a test the reference fails); otherwise, and for
        another language or renamed test files, None: the two runs of `_measured` are made."""
        if task.language != PYTHON:
            return None
        candidates: list[Twin] = []
        for module, text in self._default_test_modules(task, suite).items():
            candidates += derive_twins(module, text, lambda cls, name: True)
        chooser = secrets.SystemRandom()
        planting = self._planting(task, suite, None, chooser.sample(candidates, min(len(candidates), TWIN_CANDIDATES)))
        if not any(test.kind == "twin" for test in planting.tests):
            return None
        planting.checked = False  # the twins may pass on the reference: the canaries are judged below
        report = self._reference_run(task, suite, planting)
        canaries = Planting(tests=[test for test in planting.tests if test.kind == "canary"])
        problem = planted_problem(canaries, report.tests, report.collection_errors,
                                  report.collected_ids if report.collected is not None else None,
                                  finished=report.exit_status is not None)
        tests, ids, collected = without_planted(planting, report.tests, report.collected_ids, report.collected)
        measured = from_reference_report(report.model_copy(update={
            "tests": tests, "collected_ids": ids, "collected": collected,
            "tampered": report.tampered or problem}), key)
        if not measured.complete or measured.reference_not_passed or not measured.ids:
            return None
        passing = {_base_id(nodeid) for nodeid in measured.ids}
        twins = tuple(planted.twin for planted in planting.tests if planted.twin is not None
                      and _node(planted.module, planted.cls, planted.twin.original) in passing
                      and _fails_at_call(planted, report))
        return measured.model_copy(update={"twins": twins})

    def _reference_run(self, task: Task, suite: SuiteName, planting: Planting) -> TestReport:
        """The reference's run with `planting`, in a slot of its own (it is asked for before `evaluate` takes one)."""
        if task.language != PYTHON:
            with self._slot():
                return self._language_run(task, task.reference_files(), suite, planting)
        try:
            env = self.environments.ensure(task.env)
        except EnvironmentBuildError as exc:
            return TestReport(task_id=task.id, suite=suite, error=f"the test environment could not be built: {exc}")
        with self._slot():
            return self._python_run(task, task.reference_files(), suite, env, planting, self.prepared_assets(task, env))

    def reference_coverage(self, task: Task, suite: SuiteName) -> TestReport:
        """The reference's run of `suite` in the sandbox with the line coverage of its source files measured there
        (coverage.py from the task's environment, started by the bootstrap before any of the reference is
        imported: `TestReport.line_coverage`, or `coverage_problem` saying why there is none). A statistic of the
        task (ProjectGen's Table 2), never a score: no twins are planted, only the canaries a reference run gets."""
        task.suite(suite)
        if task.language != PYTHON:
            raise ProjectGenError(f"task {task.id!r}: line coverage is measured for Python suites only")
        if not task.has_reference:
            raise ProjectGenError(f"task {task.id!r} has no reference whose coverage could be measured")
        try:
            env = self.environments.ensure(task.env)
        except EnvironmentBuildError as exc:
            return TestReport(task_id=task.id, suite=suite, error=f"the test environment could not be built: {exc}")
        with self._slot():
            return self._python_run(task, task.reference_files(), suite, env, self._planting(task, suite, None),
                                    self.prepared_assets(task, env), coverage_sources(task))

    def _expectation_store(self) -> ExpectationStore:
        return ExpectationStore(self.settings.expectations_dir or self.environments.root / "expected-tests")

    # -- planted tests ---------------------------------------------------------------
    def _planting_expectations(self, task: Task, suite: SuiteName) -> ExpectedTests | None:
        """The measured expected tests (with their twins) of a task with a reference; None otherwise or when the
        reference does not run (a Python suite's canaries are then placed by the default test names). Measured
        here, at the first run, only for the suite a task is scored by: another suite (the check tests, the
        generators' feedback, which no reported figure counts) gets twins once something measured its expected
        tests, and until then its canaries; measuring would cost two runs of the reference per task."""
        if not task.has_reference:
            return None
        key = expectation_key(task, suite)
        if key not in self._planting_expected and suite != task.scored_suite:
            cached = self._expectation_store().load(key)
            if cached is None or cached.twins is None:
                return None  # read again next run: something may measure it meanwhile
            self._planting_expected[key] = cached
        if key not in self._planting_expected:  # a reference that does not run or finish is not tried every run
            try:
                self._planting_expected[key] = self._measured(task, suite, refresh=False)
            except ReferenceEnvironmentError as exc:
                self._planting_expected[key] = None
                self._reference_incomplete[key] = str(exc)
            except ExpectationError:
                self._planting_expected[key] = None
        return self._planting_expected[key]

    def environment_incomplete(self, task: Task, suite: SuiteName | None = None) -> str | None:
        """Why `suite` of `task` cannot be scored here ('environment incomplete: ...'): its reference itself could not
        get its dependencies (a Go module without the Go proxy, a crate without crates.io), so every candidate would
        fail for the machine's sake; or this copy of the task has no test to run (a published exercise whose test
        files declare none: nothing could pass or fail). None when the reference ran tests, or the task has no
        reference: then a candidate's failed install is the candidate's. Measured with the task's first run (the
        reference's), once per runner."""
        suite = suite or task.scored_suite
        if not task.has_reference:
            return None
        expected = self._planting_expectations(task, suite)
        if expected is not None and expected.complete and not expected.ids and not expected.left_out \
                and not expected.reference_collection_errors:
            ran = ", ".join(task.suite(suite).paths)
            return (f"environment incomplete: no test to run: the reference's run of {ran} found none (this copy of "
                    "the task lacks its tests)")
        return self._reference_incomplete.get(expectation_key(task, suite))

    def _planting(self, task: Task, suite: SuiteName, expected: ExpectedTests | None,
                  twins: Sequence[Twin] | None = None, canaries: int = CANARIES) -> Planting:
        """This run's planted tests: `twins` when given (verifying them), else a fresh choice of the verified
        ones of `expected`, and canaries; all at places chosen afresh. Planted only into modules known to be
        collected: those of the expected tests, else (no reference) files of pytest's default names when the
        task does not rename them. Another language's suite gets twins only (its canary is the session's)."""
        if task.language != PYTHON:
            chosen = twins if twins is not None else self._chosen_twins(suite, expected)
            return plan_twins(task.language, suite_sources(task, suite, PLANS[task.language]), chosen)
        collected: Callable[[str], bool] | None = None
        if expected is not None:
            modules = sorted({file_of(nodeid) for nodeid in expected.ids | expected.left_out.keys()})
            collected = {_base_id(nodeid) for nodeid in expected.ids | expected.left_out.keys()}.__contains__
            sources = {module: text for module in modules if (text := _module_text(task.root / module)) is not None}
        else:
            sources = self._default_test_modules(task, suite)
        return plan(sources, twins if twins is not None else self._chosen_twins(suite, expected), canaries, collected,
                    self._outlines)

    @staticmethod
    def _default_test_modules(task: Task, suite: SuiteName) -> dict[str, str]:
        """The suite's files of pytest's default test-file names, with their text: where tests are planted before
        the expected tests are known; none when the task renames what pytest collects."""
        if any(option in task.env.pytest_options for option in NAMING_OPTIONS):
            return {}
        modules = [rel for rel in _python_files(task.root, list(task.suite_files(suite)))
                   if any(fnmatch.fnmatch(Path(rel).name, pattern) for pattern in DEFAULT_TEST_FILES)]
        return {module: text for module in modules if (text := _module_text(task.root / module)) is not None}

    def _chosen_twins(self, suite: SuiteName, expected: ExpectedTests | None) -> list[Twin]:
        """A fresh choice of the verified twins of `expected`: the settings' count, else TWINS (fewer for a small
        suite); none for a suite whose time and resources are scored."""
        verified = list(expected.twins or ()) if expected is not None else []
        wanted = 0 if suite in MEASURED_SUITES else self.settings.twins
        if wanted is None and expected is not None:
            wanted = min(TWINS, max(1, len(expected.ids) // TESTS_PER_TWIN))
        return choose_twins(verified, min(wanted or 0, len(verified)))

    def _verified_twins(self, task: Task, suite: SuiteName, measured: ExpectedTests) -> tuple[Twin, ...]:
        """Twins of the reference's passing tests that fail on the reference at their call (within TWIN_SECONDS),
        measured once in a run of the reference with all of them planted (`TWIN_CANDIDATES` at most). A run in which a real test
        changes its outcome (a twin left state behind) is tried again with only the twins whose mutated
        assertion ends their test; if that still changes one, the suite gets no twins. Another language's twins
        are tried in halves instead when all of them together change a real test (one that does not build fails
        its whole file)."""
        chooser = secrets.SystemRandom()
        if task.language != PYTHON:
            candidates = _language_twin_candidates(task, suite, measured)
            candidates = chooser.sample(candidates, min(len(candidates), TWIN_CANDIDATES))
            together = self._twins_failing(task, suite, measured, candidates) if candidates else ()
            if together is not None:
                return together
            half = len(candidates) // 2
            return tuple(twin for group in (candidates[:half], candidates[half:]) if group
                         for twin in self._twins_failing(task, suite, measured, group) or ())
        passing = {_base_id(nodeid) for nodeid in measured.ids if nodeid not in measured.reference_not_passed}
        failing = {_base_id(nodeid) for nodeid in measured.reference_not_passed}
        candidates: list[Twin] = []
        for module in measured.modules:
            text = _module_text(task.root / module)
            if text is None:
                continue
            candidates += derive_twins(module, text,
                                       lambda cls, name, module=module: _node(module, cls, name) in passing
                                       and _node(module, cls, name) not in failing)
        candidates = chooser.sample(candidates, min(len(candidates), TWIN_CANDIDATES))
        for tried in (candidates, [twin for twin in candidates if twin.last_statement]):
            if tried and (verified := self._twins_failing(task, suite, measured, tried)) is not None:
                return verified
        return ()

    def _twins_failing(self, task: Task, suite: SuiteName, measured: ExpectedTests,
                       tried: Sequence[Twin]) -> tuple[Twin, ...] | None:
        """Of `tried`, planted together into a run of the reference, those that fail at their call; None when
        the run changed a real test's outcome (or erred, or was tampered)."""
        planting = self._planting(task, suite, measured, tried, canaries=0)
        planting.checked = False  # the twins' own outcomes are what this run measures
        report = self._reference_run(task, suite, planting)
        outcomes = {test.nodeid: test.outcome for test in report.tests}
        disturbed = [nodeid for nodeid in measured.ids if nodeid not in measured.reference_not_passed
                     and outcomes.get(nodeid) is not Outcome.PASSED]
        if report.error or report.tampered or disturbed:
            self.log(f"twins of {task.id} ({suite}): {len(disturbed)} real test(s) changed with "
                     f"{len(tried)} twin(s) planted; trying fewer")
            return None
        return tuple(planted.twin for planted in planting.tests
                     if planted.twin is not None and _fails_at_call(planted, report))

    def score(self, task: Task, candidate: Candidate, suite: SuiteName | None = None) -> ScoredRun:
        """Run `suite` against `candidate` and score it against the expected tests (#Pass / expected)."""
        suite = suite or task.scored_suite
        expected = self.expected_tests(task, suite)
        report = self.evaluate(task, candidate, suite)
        return ScoredRun(report=report, score=score_report(report, expected), expected=expected)

    # -- workspace -----------------------------------------------------------------
    def _prepare(self, folder: SessionFolder, task: Task, candidate: Candidate, suite: SuiteName,
                 planting: Planting, canary: Canary | None, prepared: PreparedAssets) -> None:
        """Fill the workspace (candidate, then the task's files and prepared data files, with the planted tests
        in their modules, then the canary module where nothing could be planted) and the control folder."""
        workspace = folder.workspace
        protected = ProtectedPaths.of(task)
        copy_candidate(workspace, candidate, protected)
        for folder_rel in task.candidate_copies:  # where a benchmark's tests look for the candidate too
            copy_candidate(workspace / folder_rel, candidate, protected)
        task_files = [*task.required_files, *task.suite_files(suite)]
        copy_task_files(task.root, workspace, task_files)
        copy_prepared_files(workspace, prepared.data)  # the task's, like its fixtures: over the candidate's
        for rel in task.empty_dirs:
            try:
                (workspace / rel).mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                pass  # the candidate has a file there: its tests meet that file
        if task.env.workdir:  # the tests' working directory exists even when nothing of the task is there
            try:
                (workspace / task.env.workdir).mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                pass  # the candidate has a file there: the tests do not start, and the report says so
        for module, text in planting.modules.items():  # a copy: the task folder is never changed
            (workspace / module).write_text(text, encoding="utf-8")
        if canary is not None:
            canary_path = workspace / _canary_rel(task, suite, canary)
            canary_path.parent.mkdir(parents=True, exist_ok=True)
            canary_path.write_text(canary.source, encoding="utf-8")
        (folder.control / "pytest.ini").write_text(pytest_ini_text(task.env.pytest_options), encoding="utf-8")
        if task.env.install is not None:
            (folder.control / "site").mkdir()
            shutil.copy2(sandbox_file("install_site.py"), folder.control / "site" / "sitecustomize.py")
            if task.env.install == "script":
                (folder.control / "setup.sh").write_text(task.env.setup_script or "", encoding="utf-8")
        canary_files = [_canary_rel(task, suite, canary)] if canary is not None else []
        folder.protect_list.write_text("\n".join(suite_mounts(task, suite, [*_python_files(workspace, task_files),
                                                                     *canary_files])) + "\n",
                                       encoding="utf-8")

    # -- running -------------------------------------------------------------------
    def _pytest_argv(self, folder: SessionFolder, task: Task, suite: SuiteName, env: Environment,
                     plugins: list[str], canary: Canary | None) -> list[str]:
        workspace = folder.workspace
        paths = [*task.suite(suite).paths, *(_canary_argument(task, suite, canary) if canary is not None else [])]
        if task.env.workdir:  # run from elsewhere: the paths from the workspace; node ids stay rootdir-relative
            paths = [str(workspace / path) for path in paths]
        argv = [
            *_isolated_bootstrap(env), *paths, "-p", "no:cacheprovider",
            f"--rootdir={workspace}", "-c", str(folder.control / "pytest.ini"),
            f"--confcutdir={workspace / task.suite_folder(suite)}", "--continue-on-collection-errors",
            "-q", "--color=no", "-rN",
        ]
        for module in plugins:
            argv += ["-p", module]
        return argv

    def _environment_variables(self, folder: SessionFolder, task: Task, env: Environment) -> dict[str, str]:
        """What every step's processes see; the import path as PYTHONPATH (the test step's own process
        gets it from the bootstrap instead: `_tests_step`)."""
        workspace = folder.workspace
        imports = [str(workspace)]
        if task.env.source_root:
            imports.insert(0, str(workspace / task.env.source_root))
        if task.env.install is not None:
            imports.append(str(folder.control / "site"))
        path = f"{env.path / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        variables = {
            "PATH": path,
            "HOME": str(folder.home),
            "TMPDIR": str(folder.tmp),
            "USER": "sandbox",  # getpass.getuser() without a passwd entry for the sandbox uid
            "LOGNAME": "sandbox",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONPATH": ":".join(imports),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        if task.env.install is not None:
            variables.update(PATH=f"{folder.install / 'bin'}:{path}", PROJECTGEN_INSTALL_PREFIX=str(folder.install))
        variables.update(expand_repo(task.env.env_vars, workspace))
        return variables

    def _install_step(self, folder: SessionFolder, spec: EnvSpec, env: Environment, variables: dict[str, str],
                      timeout: float) -> tuple[Step, str]:
        """The task's install step, and what to call it in a failure."""
        if spec.install == "script":
            argv, what = ["/bin/sh", str(folder.control / "setup.sh")], "the setup script"
        else:
            editable = ["-e"] if spec.install == "editable" else []
            argv = [str(env.python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                    "--no-warn-script-location", "--prefix", str(folder.install), *editable, "."]
            what = f"pip install {'-e ' if editable else ''}."
        step = Step("install", argv, {**variables, **INSTALL_VARIABLES, "PIP_PREFIX": str(folder.install)}, timeout,
                    stop_on_failure=True, suite=False)  # no suite to see, swap or ship: mounted once it is gone
        return step, what

    def _tests_step(self, argv: list[str], variables: dict[str, str], timeout: float, canary: Canary | None,
                    cwd: str, coverage_of: Sequence[str] = ()) -> Step:
        """pytest through the bootstrap, from `cwd` of the workspace: PYTHONPATH reaches only the processes the
        tests start; `coverage_of`: the sources whose line coverage the bootstrap measures (none: not measured)."""
        env = dict(variables, PROJECTGEN_CANARY=canary.module if canary is not None else "")
        if coverage_of:
            env["PROJECTGEN_COVERAGE_SOURCES"] = ":".join(coverage_of)
        child_path = env.pop("PYTHONPATH", "")
        env["PROJECTGEN_CHILD_PYTHONPATH"] = child_path
        env["PROJECTGEN_IMPORT_PATHS"] = child_path
        return Step("tests", argv, env, timeout, channel=True, cwd=cwd, output_keep=PRINTED_KEEP)

    def _run(self, folder: SessionFolder, task: Task, suite: SuiteName, env: Environment,
             candidate: Candidate, planting: Planting, prepared_notes: tuple[PreparedAssets, list[str]],
             coverage_of: Sequence[str] = ()) -> TestReport:
        """One session: the install step (if the task has one), then pytest; read back and checked."""
        prepared, incomplete = prepared_notes
        plugins = env.plugin_modules(task.env.pytest_plugins)
        variables = {**self._environment_variables(folder, task, env), **prepared.variables(folder.tmp)}
        timeout = self.timeout_for(task, suite)
        # a module of canaries only where none could be planted (a suite of no test of pytest's default names)
        canary = Canary.make() if planting.checked and not any(t.kind == "canary" for t in planting.tests) else None
        environment = EnvironmentInfo(
            key=env.key, python=env.python_version, python_requested=env.python_requested, path=str(env.path),
            unsatisfied_requirements=env.unsatisfied, relaxed_pins=env.relaxed, plugins=plugins,
            incomplete=list(incomplete), substituted=list(prepared.substituted),
        )
        steps = []
        install_what = ""
        if task.env.install is not None:
            install, install_what = self._install_step(folder, task.env, env, variables,
                                                       self.install_timeout_for(task, suite))
            steps.append(install)
        sources = [str(folder.workspace / source.rstrip("/")) if source.endswith("/") else source
                   for source in coverage_of]
        steps.append(self._tests_step(self._pytest_argv(folder, task, suite, env, plugins, canary), variables, timeout,
                                      canary, task.env.workdir or "", sources))
        limits = self.settings.limits
        cgroup = RunCgroup.create(limits) if self.containment().cgroups else None
        cpu_limit = cgroup.cpu_limit() if cgroup else None
        try:
            binds = (str(env.path), str(env.base_prefix()), *((str(prepared.hf_home),) if prepared.hf_home else ()))
            session = run_session(self.containment(), folder, binds, limits, steps, cgroup,
                                  prepare=lambda: self._prepare(folder, task, candidate, suite, planting, canary,
                                                                prepared))
        finally:
            if cgroup:
                cgroup.remove()
        isolation = self.isolation()
        paths = _stable_paths(folder, env)
        if session.setup_error:
            return TestReport(task_id=task.id, suite=suite, error=f"the sandbox could not be set up: "
                              f"{session.setup_error}", isolation=isolation, environment=environment)
        if task.env.install is not None:
            installed = session.steps[0]
            failure = _install_failure(installed, install_what, limits, session.oom_kills)
            if failure:
                return TestReport(task_id=task.id, suite=suite, install_error=failure,
                                  exit_status=installed.exit_status, timed_out=installed.stop == TIMED_OUT,
                                  output_tail=_shown_printed(installed, paths), isolation=isolation,
                                  environment=environment)
        report = _tests_report(task, suite, session, planting, canary, limits, isolation, environment, paths)
        if coverage_of:
            report.line_coverage, report.coverage_problem = _coverage_figure(session.channel.events, report)
        if report.usage is not None:
            report.usage.cpu_limit_cores = cpu_limit
        return with_suite_problem(report, session.suite_problem)


def _coverage_figure(events: Sequence[dict], report: TestReport) -> tuple[float | None, str | None]:
    """(line coverage %, None) from the recorder's coverage event, or (None, why there is none)."""
    if report.tampered:
        return None, f"the run was read as tampered with ({report.tampered})"
    found = [event for event in events if event.get("event") == "coverage"]
    if not found and report.timed_out:
        return None, ("the run timed out before coverage was reported (tracing slows the tests down; a longer "
                      "--timeout gives them the time)")
    if not found:
        return None, "the run ended before pytest finished: no coverage was reported"
    if "percent" in found[-1]:
        return float(found[-1]["percent"]), None
    return None, str(found[-1]["problem"])


def coverage_sources(task: Task) -> tuple[str, ...]:
    """What a coverage run of `task`'s reference measures, as ProjectGen's `--cov=PACKAGE` does: each top-level
    folder of its Python files (``bplustree/``, a folder of the workspace, so its files the tests never import
    count as not covered too) and each top-level module by name (``wordfreq``)."""
    found = {rel.split("/", 1)[0] + "/" if "/" in rel else rel[:-3]
             for rel in task.reference if rel.endswith(".py")}
    return tuple(sorted(found))


def _stable_paths(folder: SessionFolder, env: Environment) -> StablePaths:
    """The paths of this run that a model is shown as fixed ones (`stable_output`)."""
    minor = ".".join(env.python_version.split(".")[:2])
    return StablePaths.of([(folder.workspace, WORKSPACE), (folder.root, SESSION), (env.path, ENVIRONMENT),
                           (env.base_prefix() / "lib" / f"python{minor}", f"{INTERPRETER}/lib/python{minor}"),
                           (sandbox_file("pytest_bootstrap.py").parent, HARNESS)])


def _isolated_bootstrap(env: Environment) -> list[str]:
    """The test step's command up to pytest's arguments: the environment's interpreter, isolated, running
    the bootstrap (PYTEST_DISABLE_PLUGIN_AUTOLOAD is in the step's variables, which pytest still reads)."""
    return [str(env.python), "-I", "-B", "-c", BOOTSTRAP, str(sandbox_file("pytest_bootstrap.py").parent)]


def _install_failure(installed: StepResult, what: str, limits: Limits, oom_kills: int) -> str | None:
    if installed.stop == FINISHED and installed.exit_status == 0:
        return None
    if installed.stop == FINISHED:
        return f"the install step ({what}) failed with exit status {installed.exit_status}"
    return f"the install step ({what}) was stopped: {_why_stopped(installed, limits, oom_kills)}"


def _tests_report(task: Task, suite: SuiteName, session: SessionResult, planting: Planting, canary: Canary | None,
                  limits: Limits, isolation: str, environment: EnvironmentInfo, paths: StablePaths) -> TestReport:
    """The test step's report: the recorder's events checked, the planted tests (and a canary module) taken out,
    tampering applied, and the messages and the output a model is shown built from what is left, the same for
    every run of the same candidate (`stable_output`)."""
    ran = session.steps[-1]
    channel = session.channel
    combined = _combine(channel.events, _why_stopped(ran, limits, session.oom_kills), _stop_seen(ran, session))
    tests, collection_errors, collected = combined.tests, combined.collection_errors, combined.collected
    collected_event = next((e for e in channel.events if e.get("event") == "collected"), None)
    all_ids = list(collected_event.get("nodeids") or []) if collected_event is not None else []
    tampered = channel.tampered
    if canary is not None:
        folder = task.suite_folder(suite)
        tests = [test for test in tests if not canary.owns(test.nodeid, folder)]
        kept = [nodeid for nodeid in all_ids if not canary.owns(nodeid, folder)]
        if collected is not None:
            collected -= len(all_ids) - len(kept)
        all_ids = kept
        tampered = tampered or hidden_tests_problem(_canary_ids(task, suite, canary), channel.events)
    exit_status = ran.exit_status if ran.stop == FINISHED else None
    if planting.checked:
        tampered = tampered or planted_problem(planting, tests, collection_errors,
                                               all_ids if collected_event is not None else None,
                                               finished=any(e.get("event") == "finish" for e in channel.events))
        planted_failed = any(planting.owns(test.nodeid) and test.outcome is not Outcome.PASSED for test in tests)
        tests, all_ids, collected = without_planted(planting, tests, all_ids, collected)
        if exit_status == 1 and planted_failed and not collection_errors and not any(
                test.outcome in (Outcome.FAILED, Outcome.ERROR) for test in tests):
            exit_status = 0  # pytest's status without the planted failures
    lines = planting.original_lines if planting.checked else None  # a run measuring twins keeps their lines
    tests = [test.model_copy(update={"message": message_tail(stable_text(test.message, paths, lines))})
             for test in tests]
    collection_errors = [error.model_copy(update={"message": message_tail(stable_text(error.message, paths, lines))})
                         for error in collection_errors]
    output = _shown_output(tests, collection_errors, _shown_printed(ran, paths, lines)) + _notes(ran, limits, session)
    if combined.unfinished and not tampered:
        output += f"\n[projectgen] {combined.unfinished}"
    if tampered:
        output += f"\n[projectgen] the results were tampered with: {tampered}; no test counts as passed"
        tests = [TestResult(nodeid=test.nodeid, outcome=Outcome.FAILED, duration=test.duration,
                            message=f"[projectgen] not counted: {tampered}") for test in tests]
    return TestReport(
        task_id=task.id,
        suite=suite,
        tests=tests,
        collection_errors=collection_errors,
        collected=collected,
        collected_ids=all_ids,
        exit_status=exit_status,
        timed_out=ran.stop == TIMED_OUT,
        output_tail=output,
        isolation=isolation,
        tampered=tampered,
        environment=environment,
        usage=_usage(ran),
    )


def _stop_seen(step: StepResult, session: SessionResult) -> bool:
    """Whether the runner (the launcher, the kernel's memory limit) stopped the test step, rather than the test
    process ending on its own: only then may a run without the recorder's finish event keep its passes."""
    return step.stop in (TIMED_OUT, OUTPUT_LIMIT, DIED) or session.oom_kills > 0


def _canary_ids(task: Task, suite: SuiteName, canary: Canary) -> list[str]:
    """The node ids of the canary module's tests (module functions and TestCase methods), as pytest names
    them: each must report a failure (`hidden_tests_problem`)."""
    module = _canary_rel(task, suite, canary)
    ids = []
    for node in ast.parse(canary.source).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            ids.append(f"{module}::{node.name}")
        elif isinstance(node, ast.ClassDef):
            ids += [f"{module}::{node.name}::{item.name}" for item in node.body
                    if isinstance(item, ast.FunctionDef) and item.name.startswith("test")]
    return ids


SUMMARY_ORDER = ((Outcome.FAILED, "failed"), (Outcome.PASSED, "passed"), (Outcome.SKIPPED, "skipped"),
                 (Outcome.XFAIL, "xfailed"), (Outcome.XPASS, "xpassed"))


def _shown_output(tests: Sequence[TestResult], collection_errors: Sequence[CollectionError], printed: str) -> str:
    """What the run said, as a model is shown it: each collection error and failing test with its message, a
    summary line like pytest's, then what the test process printed itself (pytest's terminal is silent: it
    would name the planted tests); the last OUTPUT_TAIL_CHARS characters."""
    parts = [f"ERROR collecting {error.nodeid}\n{error.message.rstrip()}" for error in collection_errors]
    parts += [f"{test.outcome.value.upper()} {test.nodeid}\n{test.message.rstrip()}" for test in tests
              if test.outcome in (Outcome.FAILED, Outcome.ERROR)]
    counts = [f"{sum(1 for t in tests if t.outcome is outcome)} {word}" for outcome, word in SUMMARY_ORDER
              if any(t.outcome is outcome for t in tests)]
    errors = len(collection_errors) + sum(1 for t in tests if t.outcome is Outcome.ERROR)
    if errors:
        counts.append(f"{errors} error{'s' if errors > 1 else ''}")
    parts.append(", ".join(counts) if counts else "no tests ran")
    if printed.strip():
        parts.append(printed.rstrip())
    text = "\n".join(parts)
    return text if len(text) <= OUTPUT_TAIL_CHARS else text[-OUTPUT_TAIL_CHARS:]


def _shown_printed(step: StepResult, paths: StablePaths, lines: Callable[[str], str] | None = None) -> str:
    """What `step` printed, as a model is shown it: from a whole line, with stable paths (`stable_output`)."""
    return stable_text(printed_tail(step.output.text(), step.output.total > step.output.keep), paths, lines)


def _usage(step: StepResult) -> ResourceUsage | None:
    """The test step's usage as the launcher measured it (`sandbox_session.StepUsage`), in a report's terms."""
    if step.usage is None:
        return None
    return ResourceUsage(peak_memory_mb=step.usage.peak_rss_kb / 1024, cpu_seconds=step.usage.cpu_seconds,
                         wall_seconds=step.usage.wall_seconds)


def _why_stopped(step: StepResult, limits: Limits, oom_kills: int) -> str:
    """Why tests that had not finished died, for their messages."""
    if step.stop == TIMED_OUT:
        return "timed out while running"
    if step.stop == OUTPUT_LIMIT:
        return f"stopped: the run printed more than {_mib(limits.output_bytes)} of output"
    if oom_kills:
        return f"killed: the run reached its memory limit ({_mib(limits.memory_bytes)})"
    if step.stop == DIED:
        return "the sandbox died while the tests ran"
    return "test process died while running"


def _notes(step: StepResult, limits: Limits, session: SessionResult) -> str:
    notes = []
    if step.stop == OUTPUT_LIMIT:
        # the limit, not the bytes read: how many arrive before the stop varies from run to run
        notes.append(f"run stopped: too much output (limit {_mib(limits.output_bytes)})")
    if session.oom_kills:
        notes.append(f"{session.oom_kills} process(es) killed: the run reached its memory limit "
                     f"({_mib(limits.memory_bytes)})")
    if session.channel_overflow:
        notes.append("the test recorder wrote more than its limit; later results were dropped")
    return "".join(f"\n[projectgen] {note}" for note in notes)


def _canary_argument(task: Task, suite: SuiteName, canary: Canary) -> list[str]:
    """The canary module as a pytest argument, unless a folder the suite names holds it already: pytest 8
    then collects only the file from that folder (flask's and parsel's suites ran the canaries alone)."""
    folder = task.suite_folder(suite)
    for path in task.suite(suite).paths:
        if (task.root / path).is_dir() and (folder == path or folder.startswith(path.rstrip("/") + "/")
                                             or path in ("", ".")):
            return []
    return [_canary_rel(task, suite, canary)]


def _canary_rel(task: Task, suite: SuiteName, canary: Canary) -> str:
    folder = task.suite_folder(suite)
    return f"{folder}/{canary.module}" if folder else canary.module


def _module_text(path: Path) -> str | None:
    """A test module's text, when tests can be planted into it: a Python file in UTF-8 with "\n" line ends
    (written back with the planted tests, the rest of it stays byte for byte)."""
    if path.suffix != ".py" or not path.is_file():
        return None
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return None if "\r" in text else text


def _base_id(nodeid: str) -> str:
    """A node id without its parameters: `m.py::test_x[1]` -> `m.py::test_x`."""
    return nodeid.split("[", 1)[0]


def _node(module: str, cls: str | None, name: str) -> str:
    return "::".join(part for part in (module, cls, name) if part)


def _language_twin_candidates(task: Task, suite: SuiteName, measured: ExpectedTests) -> list[Twin]:
    """Twins of the tests of another language's suite that the reference passes (every result of the test, and
    it has one: a Go test's subtests, a jest test under its `describe` titles)."""
    passed = [nodeid for nodeid in measured.ids if nodeid not in measured.reference_not_passed]
    failed = list(measured.reference_not_passed)

    def passing(_module: str, name: str) -> bool:
        probe = PlantedTest("", None, name, "twin", "")
        return any(map(probe.owns, passed)) and not any(map(probe.owns, failed))

    sources = suite_sources(task, suite, PLANS[task.language])
    folders = sorted({Path(rel).parent for rel in sources})  # a Go test's table may be in a file of no test
    package = {(folder / path.name).as_posix(): path.read_text(encoding="utf-8", errors="replace")
               for folder in folders for path in sorted((task.root / folder).glob("*_test.go"))}
    return suite_twins(task.language, sources, passing, package)


def _fails_at_call(planted: PlantedTest, report: TestReport) -> bool:
    """Whether every result of `planted` failed in its call (not in a fixture), and it has one, within
    TWIN_SECONDS in all."""
    results = [test for test in report.tests if planted.owns(test.nodeid)]
    return bool(results) and all(test.outcome is Outcome.FAILED for test in results) and \
        sum(test.duration for test in results) <= TWIN_SECONDS


def _python_files(workspace: Path, task_files: list[str]) -> list[str]:
    """The task's Python files in the workspace (folders expanded): bound read-only in the sandbox."""
    found: list[str] = []
    for rel in task_files:
        path = workspace / rel
        if path.is_dir():
            found += sorted(child.relative_to(workspace).as_posix() for child in path.rglob("*.py") if child.is_file())
        elif rel.endswith(".py"):
            found.append(rel)
    return found


def expand_repo(env_vars: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """The task's environment variables with `{repo}` replaced by the workspace's path (as the tests see it)."""
    return {name: value.replace(REPO_PLACEHOLDER, str(workspace)) for name, value in env_vars.items()}


def _mib(size: int | None) -> str:
    return f"{(size or 0) / 1024**2:g} MiB"


def _phase_outcome(event: dict) -> Outcome | None:
    """Outcome that one setup/call/teardown report implies, or None if it changes nothing."""
    when, outcome, xfail = event.get("when"), event.get("outcome"), event.get("wasxfail")
    if outcome == "failed":
        return Outcome.FAILED if when == "call" else Outcome.ERROR
    if outcome == "skipped":
        return Outcome.XFAIL if xfail else Outcome.SKIPPED
    if outcome == "passed" and when == "call" and not event.get("subtest"):
        return Outcome.XPASS if xfail else Outcome.PASSED
    return None


PHASE_ORDER = {"setup": 0, "call": 1, "teardown": 2}
TEARDOWN_ERROR = "[projectgen] passed, then its teardown failed (counted as passed, as pytest counts it): "
OUT_OF_ORDER = ("[projectgen] not counted: the recorder's reports of this test came out of order or twice "
                "(a start, then one setup, call and teardown report, in that order)")


@dataclass
class CombinedEvents:
    """The recorder's events folded into one result per test (`_combine`)."""

    tests: list[TestResult]
    collection_errors: list[CollectionError]
    collected: int | None
    unfinished: str | None = None  # why no test counts as passed: the run ended without the finish event


@dataclass
class _TestEvents:
    """What the events said of one test so far: the phase it reached, and whether they kept the recorder's
    order."""

    result: TestResult | None = None
    phase: int = -1  # the last phase reported (PHASE_ORDER); -1: started, nothing reported yet
    torn_down: bool = False
    broken: bool = False
    rerun: bool = False  # an attempt pytest-rerunfailures runs again: its next start is a new attempt
    spent: float = 0.0  # seconds of the earlier attempts


def _combine(events: list[dict], reason: str, stop_seen: bool) -> CombinedEvents:
    """Fold the event stream into one result per test; a pass needs positive evidence.

    A test passes only when the events say so in the recorder's order: one start, then (when its setup
    failed or skipped) a setup report, one passing call report, and a passed teardown, before the next test
    starts. A test reported twice or out of that order failed (`OUT_OF_ORDER`); one whose teardown never
    reported (the run was stopped in its call, or in a fixture's setup or teardown) is an error, for
    `reason`, unless it had already failed. A run without the recorder's finish event counts no pass unless
    the runner saw why it stopped (`stop_seen`: a timeout, the output or memory limit, the sandbox dying): a
    test process that ends on its own before pytest finished (`os._exit`, a crash) leaves only its word for
    the tests it reported. Subtest reports (pytest's `subtests`, unittest's `subTest`) may only fail a test;
    a "rerun" report (pytest-rerunfailures) is an attempt the phase's next report replaces.
    Events are as `results_channel.event_problem` lets through; anything else is skipped, never raised on.
    """
    tests: dict[str, _TestEvents] = {}
    running: str | None = None
    collection_errors: list[CollectionError] = []
    collected: int | None = None
    finished = False
    for event in events:
        kind = event.get("event")
        nodeid = event.get("nodeid")
        if kind == "collect_error" and isinstance(nodeid, str):
            collection_errors.append(CollectionError(nodeid=nodeid, message=str(event.get("message") or "")))
        elif kind == "collected" and type(event.get("count")) is int:
            collected = event["count"]
        elif kind == "finish":
            finished = True
        elif kind == "start" and isinstance(nodeid, str):
            if running is not None and not tests[running].torn_down:
                tests[running].broken = True  # the next test began before this one's teardown
            known = tests.get(nodeid)
            if known is None or (known.rerun and known.torn_down and not known.broken):
                spent = known.spent + (known.result.duration if known.result else 0.0) if known else 0.0
                tests[nodeid] = _TestEvents(spent=spent)
            else:
                known.broken = True  # started twice
            running = nodeid
        elif kind == "report" and isinstance(nodeid, str):
            _fold_report(tests, running, nodeid, event)
    results = []
    for nodeid, seen in tests.items():
        current = seen.result
        failed = current is not None and current.outcome in (Outcome.FAILED, Outcome.ERROR)
        duration = (current.duration if current else 0.0) + seen.spent
        if current is not None and seen.spent:
            current.duration = duration
        if seen.broken:
            current = TestResult(nodeid=nodeid, outcome=Outcome.FAILED, duration=duration, message=OUT_OF_ORDER)
        elif not seen.torn_down and not failed:
            current = TestResult(nodeid=nodeid, outcome=Outcome.ERROR, message=reason, duration=duration)
        if current is not None:
            results.append(current)
    unfinished = None
    if not finished and not stop_seen:
        unfinished = (f"the test process ended before pytest finished ({reason}), without the test recorder's "
                      "finish event: no test counts as passed")
        results = [test if test.outcome not in (Outcome.PASSED, Outcome.XPASS) else
                   TestResult(nodeid=test.nodeid, outcome=Outcome.FAILED, duration=test.duration,
                              message=f"[projectgen] not counted: {unfinished}") for test in results]
    return CombinedEvents(results, collection_errors, collected, unfinished)


def _fold_report(tests: dict[str, _TestEvents], running: str | None, nodeid: str, event: dict) -> None:
    """Add one setup/call/teardown report to its test's result; a report out of the recorder's order (not of
    the test that started last, a phase again or before one already reported) breaks the test."""
    seen = tests.get(nodeid)
    phase = PHASE_ORDER.get(event.get("when"), -1)
    subtest = bool(event.get("subtest"))
    if event.get("outcome") == "rerun":  # a failed attempt, run again from its start
        seen.rerun = True
        subtest = True
    if seen is None:
        seen = tests[nodeid] = _TestEvents(broken=True)  # reported without a start
    elif nodeid != running or seen.torn_down or phase < seen.phase or (phase == seen.phase and not subtest):
        seen.broken = True
    if subtest and phase == PHASE_ORDER["teardown"]:
        seen.broken = True
    if not subtest:
        seen.phase = max(seen.phase, phase)
    if phase == PHASE_ORDER["teardown"]:
        seen.torn_down = True
    outcome = _phase_outcome(event)
    current = seen.result
    duration = (current.duration if current else 0.0) + _seconds(event.get("duration"))
    if outcome is None:
        if current:
            current.duration = duration
        return
    if current and current.outcome in (Outcome.FAILED, Outcome.ERROR):
        current.duration = duration  # the first failure is the one that explains
        return
    if current and phase == PHASE_ORDER["teardown"] and current.outcome in (Outcome.PASSED, Outcome.XPASS):
        # pytest counts a test whose call passed as passed even when its teardown then errs ("247 passed, 1
        # error"), and the benchmarks' harnesses count from that line: the error is kept, the pass stands
        current.duration = duration
        current.message = f"{TEARDOWN_ERROR}{event.get('message') or ''}"
        return
    seen.result = TestResult(nodeid=nodeid, outcome=outcome, duration=duration,
                             message=str(event.get("message") or ""))


def _seconds(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
