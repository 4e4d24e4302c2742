"""Run a task's tests against a candidate repository, in a sandbox, and read the results.

Each run gets a fresh workspace: the candidate's files first, then the task's
fixtures and test suite on top (a candidate's test files, conftest files and test
fixtures are dropped, so generated code can never replace or add to the tests;
`protected_paths` says which; its other files stay, also beside the tests). pytest runs
in the task's cached environment with our recorder plugin, a config file and
rootdir chosen by us (the task's own flags are not used), plugin autoloading
off, conftest lookup cut at the suite's folder, a hard timeout that kills the
whole process tree, resource limits, and no network. Its output goes through a
pipe of which only the end is kept; a run that prints more than the output
limit is stopped.

What a task may ask of a workspace: its empty folders (`Task.empty_dirs`),
`{repo}` in its environment variables (the workspace's path), a source root put
first on the import path, and an install step (`EnvSpec.install`) run in the same
sandbox before pytest. The install never touches the shared, cached environment:
pip installs offline, without build isolation (with the environment's own
setuptools) and with `--prefix` into the workspace's `.projectgen/install`, whose
site-packages a `sitecustomize` adds (with its `.pth` files, so editable installs
work) and whose `bin` goes first on PATH. A failed install is the candidate's
failure (`TestReport.install_error`): its tests do not run.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.datasets.task import EnvSpec, SuiteName, Task
from projectgen.errors import ProjectGenError
from projectgen.evaluation.environments import Environment, EnvironmentBuildError, EnvironmentCache
from projectgen.evaluation.expectations import (
    ExpectationError,
    ExpectationStore,
    ExpectedTests,
    ScoredRun,
    declared,
    expectation_key,
    from_reference_report,
    score_report,
)
from projectgen.evaluation.protected_paths import ProtectedPaths
from projectgen.evaluation.recent_runs import RecentRuns
from projectgen.evaluation.report import CollectionError, EnvironmentInfo, Outcome, TestReport, TestResult
from projectgen.evaluation.sandbox import (
    NAMESPACES,
    Containment,
    Limits,
    Paths,
    RunCgroup,
    default_hidden_paths,
    default_scratch_paths,
    probe_containment,
    sandbox_file,
    sandbox_prefix,
    start_sandboxed,
)
from projectgen.repository import SKIPPED_DIRS, safe_relpath

OUTPUT_TAIL_CHARS = 6000
Candidate = Path | Mapping[str, str] | Mapping[str, Path]
CONTROL_DIR = ".projectgen"
FINISHED, TIMED_OUT, OUTPUT_LIMIT = "finished", "timed out", "output limit"
DEFAULT_TIMEOUT = 300.0
INSTALL_DIR = "install"  # under CONTROL_DIR: the prefix the install step installs into
REPO_PLACEHOLDER = "{repo}"
# pip reads its `--no-*` switches from the environment inverted: PIP_NO_BUILD_ISOLATION=0 turns isolation off.
INSTALL_VARIABLES = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                     "PIP_NO_INPUT": "1"}


@dataclass
class RunnerSettings:
    """How tests are run; defaults suit hundreds of untrusted runs on a small machine."""

    timeout: float | None = None  # seconds per run; None: the task's own timeout, else DEFAULT_TIMEOUT
    limits: Limits = field(default_factory=Limits)
    isolation: str = "auto"  # "auto" | "namespaces" | "none"
    cache_dir: Path | None = None
    expectations_dir: Path | None = None  # measured expected tests (default: `expected-tests` in the env cache)
    workdir: Path | None = None  # where workspaces are created (default: system temp)
    keep_workspace: bool = False
    use_uv: bool = True
    install_timeout: float = 1800.0


class SandboxRunner:
    """Evaluates candidate repositories against a task's check, unit or acceptance tests."""

    def __init__(self, settings: RunnerSettings | None = None, log: Callable[[str], None] | None = None) -> None:
        self.settings = settings or RunnerSettings()
        self.log = log or (lambda message: None)
        self.environments = EnvironmentCache(
            self.settings.cache_dir,
            install_timeout=self.settings.install_timeout,
            use_uv=self.settings.use_uv,
            log=self.log,
        )
        self._containment: Containment | None = None
        self.recent = RecentRuns()

    # -- isolation -----------------------------------------------------------------
    def containment(self) -> Containment:
        """What the sandbox enforces here; probed once, and what is not contained is said once."""
        if self._containment is None:
            wanted = self.settings.isolation
            with tempfile.TemporaryDirectory(prefix="projectgen-probe-") as scratch:
                found = probe_containment(wanted, Path(scratch))
            if found.isolation != NAMESPACES and wanted == NAMESPACES:
                raise ProjectGenError(f"sandbox isolation 'namespaces' requested but unavailable: {found.notes[0]}")
            for note in found.notes:
                self.log(f"warning: {note}")
            self._containment = found
        return self._containment

    def isolation(self) -> str:
        """The isolation level in use ("namespaces" or "none")."""
        return self.containment().isolation

    def timeout_for(self, task: Task) -> float:
        """Seconds one run of `task` may take: the runner's timeout when set (a user's `--timeout` wins),
        else the task's declared `timeout`, else DEFAULT_TIMEOUT."""
        if self.settings.timeout is not None:
            return self.settings.timeout
        return task.timeout if task.timeout is not None else DEFAULT_TIMEOUT

    # -- public API ----------------------------------------------------------------
    def evaluate(self, task: Task, candidate: Candidate, suite: SuiteName = "unit") -> TestReport:
        """Run one suite of `task` against `candidate`.

        `candidate` is a folder, or a mapping from repository path to file text
        (or to a file on disk to copy, which keeps binary files intact). The same suite asked again
        for the same files (a mapping of texts) gets the report of the run just made (`RecentRuns`).
        """
        task.suite(suite)
        key = RecentRuns.key(task.id, str(task.root), suite, candidate)
        if key is not None and (known := self.recent.get(key)) is not None:
            return known
        started = time.monotonic()
        try:
            env = self.environments.ensure(task.env)
        except EnvironmentBuildError as exc:
            return TestReport(task_id=task.id, suite=suite, error=f"the test environment could not be built: {exc}",
                              duration=time.monotonic() - started)
        parent = self.settings.workdir
        if parent:
            Path(parent).mkdir(parents=True, exist_ok=True)
        workspace = Path(tempfile.mkdtemp(prefix=f"projectgen-{task.id}-", dir=parent))
        try:
            report = self._run_pytest(workspace, task, suite, env,
                                      prepare=lambda: self._prepare_workspace(workspace, task, candidate, suite))
        finally:
            if not self.settings.keep_workspace:
                shutil.rmtree(workspace, ignore_errors=True)
        report.duration = time.monotonic() - started
        if key is not None:
            self.recent.put(key, report)
        return report

    def expected_tests(self, task: Task, suite: SuiteName = "unit", *, refresh: bool = False) -> ExpectedTests:
        """The tests `suite` is expected to pass: declared by the dataset, else measured by running
        the reference once and cached per (task, suite, environment, test files)."""
        task.suite(suite)
        given = declared(task, suite)
        if given is not None:
            return given
        if not task.has_reference:
            raise ExpectationError(f"task {task.id!r} has no reference and declares no expected {suite} tests")
        key = expectation_key(task, suite)
        store = ExpectationStore(self.settings.expectations_dir or self.environments.root / "expected-tests")
        with store.locked(key):
            cached = None if refresh else store.load(key)
            if cached is not None:
                return cached
            self.log(f"measuring the expected {suite} tests of {task.id} by running its reference")
            measured = from_reference_report(self.evaluate(task, task.reference_files(), suite), key)
            if measured.complete:
                store.save(measured)
        return measured

    def score(self, task: Task, candidate: Candidate, suite: SuiteName = "unit") -> ScoredRun:
        """Run `suite` against `candidate` and score it against the expected tests (#Pass / expected)."""
        expected = self.expected_tests(task, suite)
        report = self.evaluate(task, candidate, suite)
        return ScoredRun(report=report, score=score_report(report, expected), expected=expected)

    # -- workspace -----------------------------------------------------------------
    def _prepare_workspace(self, workspace: Path, task: Task, candidate: Candidate, suite: SuiteName) -> None:
        protected = ProtectedPaths.of(task)

        def is_test_path(rel: str) -> bool:
            return protected.refuses(rel) or rel == CONTROL_DIR or rel.startswith(CONTROL_DIR + "/")

        if isinstance(candidate, Mapping):
            for rel, content in candidate.items():
                rel = safe_relpath(rel)
                if is_test_path(rel):
                    continue
                target = workspace / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, Path):
                    shutil.copy2(content, target)
                else:
                    target.write_text(content, encoding="utf-8")
        else:
            source = Path(candidate)
            if not source.is_dir():
                raise ProjectGenError(f"{source}: candidate repository folder not found")
            for path in sorted(source.rglob("*")):
                rel = path.relative_to(source).as_posix()
                if any(part in SKIPPED_DIRS for part in path.relative_to(source).parts):
                    continue
                if path.is_symlink():
                    continue  # a link could point anywhere on the host
                target = workspace / rel
                if path.is_dir():
                    if not is_test_path(rel + "/"):
                        target.mkdir(parents=True, exist_ok=True)
                elif path.is_file() and not is_test_path(rel):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target)
        for rel in task.required_files:
            _copy(task.root / rel, workspace / rel)
        for rel in task.suite_files(suite):
            _copy(task.root / rel, workspace / rel)
        for rel in task.empty_dirs:
            try:
                (workspace / rel).mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                pass  # the candidate has a file there: its tests meet that file
        control = workspace / CONTROL_DIR
        (control / "plugin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(sandbox_file("projectgen_results.py"), control / "plugin" / "projectgen_results.py")
        if task.env.install is not None:
            (control / INSTALL_DIR).mkdir()
            shutil.copy2(sandbox_file("install_site.py"), control / "plugin" / "sitecustomize.py")
            if task.env.install == "script":
                (control / "setup.sh").write_text(task.env.setup_script or "", encoding="utf-8")
        (control / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        for private in ("home", "tmp"):
            (control / private).mkdir(exist_ok=True)
        _make_owner_writable(workspace)
        run_as = self.containment().run_as
        if run_as is not None:
            _hand_over(workspace, run_as)

    # -- running -------------------------------------------------------------------
    def _pytest_command(self, workspace: Path, task: Task, suite: SuiteName, env: Environment,
                        plugins: list[str]) -> list[str]:
        pytest_args = [
            str(env.python), "-m", "pytest", *task.suite(suite).paths,
            "-p", "projectgen_results", "-p", "no:cacheprovider",
            f"--rootdir={workspace}", "-c", str(workspace / CONTROL_DIR / "pytest.ini"),
            f"--confcutdir={workspace / task.suite_folder(suite)}", "--continue-on-collection-errors",
            "-q", "--color=no", "-rN",
        ]
        for module in plugins:
            pytest_args += ["-p", module]
        return pytest_args

    def _environment_variables(self, workspace: Path, task: Task, env: Environment) -> dict[str, str]:
        control = workspace / CONTROL_DIR
        imports = [str(workspace), str(control / "plugin")]
        if task.env.source_root:
            imports.insert(0, str(workspace / task.env.source_root))
        path = f"{env.path / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        variables = {
            "PATH": path,
            "HOME": str(control / "home"),
            "TMPDIR": str(control / "tmp"),
            "USER": "sandbox",  # getpass.getuser() without a passwd entry for the sandbox uid
            "LOGNAME": "sandbox",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONPATH": ":".join(imports),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PROJECTGEN_RESULTS_FILE": str(control / "results.jsonl"),
        }
        if task.env.install is not None:
            prefix = control / INSTALL_DIR
            variables.update(PATH=f"{prefix / 'bin'}:{path}", PROJECTGEN_INSTALL_PREFIX=str(prefix))
        variables.update(expand_repo(task.env.env_vars, workspace))
        return variables

    def _sandboxed(self, command: list[str], workspace: Path, env: Environment, variables: dict[str, str],
                   timeout: float, prepare: Callable[[], None] | None = None) -> _Ended:
        """Run one command in the sandbox (its own cgroup, when there are cgroups) until it ends or is stopped;
        `prepare` fills the workspace while the sandbox starts (`start_sandboxed`)."""
        cgroup = RunCgroup.create(self.settings.limits) if self.containment().cgroups else None
        try:
            paths = Paths(workspace, keep=(str(env.path), str(env.base_prefix())),
                          hide=tuple(default_hidden_paths()), scratch=tuple(default_scratch_paths()))
            prefix = sandbox_prefix(self.containment(), paths, self.settings.limits, cgroup)
            return self._supervise(prefix + command, workspace, variables, cgroup, timeout, prepare)
        finally:
            if cgroup:
                cgroup.remove()

    def _install(self, workspace: Path, spec: EnvSpec, env: Environment, variables: dict[str, str],
                 timeout: float, prepare: Callable[[], None]) -> tuple[_Ended, str | None]:
        """Run the task's install step; how it ended, and why it failed (None when it worked)."""
        prefix = workspace / CONTROL_DIR / INSTALL_DIR
        if spec.install == "script":
            command, what = ["/bin/sh", str(workspace / CONTROL_DIR / "setup.sh")], "the setup script"
        else:
            editable = ["-e"] if spec.install == "editable" else []
            command = [str(env.python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                       "--no-warn-script-location", "--prefix", str(prefix), *editable, "."]
            what = f"pip install {'-e ' if editable else ''}."
        ended = self._sandboxed(command, workspace, env, {**variables, **INSTALL_VARIABLES,
                                                          "PIP_PREFIX": str(prefix)}, timeout, prepare)
        if ended.stop == FINISHED and ended.exit_status == 0:
            return ended, None
        if ended.stop == FINISHED:
            return ended, f"the install step ({what}) failed with exit status {ended.exit_status}"
        return ended, f"the install step ({what}) was stopped: {ended.reason}"

    def _run_pytest(self, workspace: Path, task: Task, suite: SuiteName, env: Environment,
                    prepare: Callable[[], None]) -> TestReport:
        """Install (if the task asks) and run pytest; `prepare` fills the workspace while the first sandbox starts."""
        plugins = env.plugin_modules(task.env.pytest_plugins)
        variables = self._environment_variables(workspace, task, env)
        timeout = self.timeout_for(task)
        environment = EnvironmentInfo(
            key=env.key, python=env.python_version, python_requested=env.python_requested, path=str(env.path),
            unsatisfied_requirements=env.unsatisfied, plugins=plugins,
        )
        if task.env.install is not None:
            installed, failure = self._install(workspace, task.env, env, variables, timeout, prepare)
            if failure:
                return TestReport(task_id=task.id, suite=suite, install_error=failure,
                                  exit_status=installed.exit_status, timed_out=installed.stop == TIMED_OUT,
                                  output_tail=installed.output, isolation=self.isolation(), environment=environment)
        ended = self._sandboxed(self._pytest_command(workspace, task, suite, env, plugins), workspace, env, variables,
                                timeout, None if task.env.install is not None else prepare)
        events = _read_events(workspace / CONTROL_DIR / "results.jsonl")
        tests, collection_errors, collected = _combine(events, ended.reason)
        collected_ids = next((list(e.get("nodeids") or []) for e in events if e.get("event") == "collected"), [])
        return TestReport(
            task_id=task.id,
            suite=suite,
            tests=tests,
            collection_errors=collection_errors,
            collected=collected,
            collected_ids=collected_ids,
            exit_status=ended.exit_status,
            timed_out=ended.stop == TIMED_OUT,
            output_tail=ended.output,
            isolation=self.isolation(),
            environment=environment,
        )

    def _supervise(self, command: list[str], workspace: Path, variables: dict[str, str],
                   cgroup: RunCgroup | None, timeout: float, prepare: Callable[[], None] | None = None) -> _Ended:
        """Run a command until it ends, times out or floods its output; then kill whatever is left."""
        output = _Tail(OUTPUT_TAIL_CHARS)
        process = start_sandboxed(command, cgroup, prepare, cwd=workspace, env=variables, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        try:
            stop = _pump(process, output, timeout, self.settings.limits.output_bytes)
        finally:
            _kill_group(process)  # the hung run, or stragglers that outlived pytest in its session
            if cgroup:
                cgroup.kill()  # and those that left the session
            if process.stdout:
                process.stdout.close()
        return _Ended.explain(stop, process.returncode, output, self.settings.limits,
                              cgroup.oom_kills() if cgroup else 0)


class _Tail:
    """The last `keep` bytes of a stream and its total length: a flood costs no memory."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.total = 0
        self.data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk[-self.keep:]
        del self.data[:-self.keep]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class _Ended:
    """How a run ended: why it stopped, its exit status, the end of its output and why unfinished tests died."""

    stop: str
    exit_status: int | None
    output: str
    reason: str

    @classmethod
    def explain(cls, stop: str, returncode: int | None, output: _Tail, limits: Limits, oom_kills: int) -> _Ended:
        notes = []
        if stop == TIMED_OUT:
            reason = "timed out while running"
        elif stop == OUTPUT_LIMIT:
            reason = f"stopped: the run printed more than {_mib(limits.output_bytes)} of output"
            notes.append(f"run stopped after {output.total} bytes of output (limit {_mib(limits.output_bytes)})")
        elif oom_kills:
            reason = f"killed: the run reached its memory limit ({_mib(limits.memory_bytes)})"
        else:
            reason = "test process died while running"
        if oom_kills:
            notes.append(f"{oom_kills} process(es) killed: the run reached its memory limit "
                         f"({_mib(limits.memory_bytes)})")
        text = output.text() + "".join(f"\n[projectgen] {note}" for note in notes)
        return cls(stop, returncode if stop == FINISHED else None, text, reason)


def expand_repo(env_vars: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """The task's environment variables with `{repo}` replaced by the workspace's path (as the tests see it)."""
    return {name: value.replace(REPO_PLACEHOLDER, str(workspace)) for name, value in env_vars.items()}


def _mib(size: int | None) -> str:
    return f"{(size or 0) / 1024**2:g} MiB"


def _pump(process: subprocess.Popen, output: _Tail, timeout: float, limit: int | None) -> str:
    """Keep the end of the run's output until it exits, times out or prints more than `limit` bytes."""
    assert process.stdout is not None
    stream = process.stdout.fileno()
    os.set_blocking(stream, False)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            _drain(stream, output)  # what it wrote before exiting (stragglers may go on writing)
            return FINISHED
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return TIMED_OUT
        ready, _, _ = select.select([stream], [], [], min(remaining, 0.2))
        if not ready:
            continue
        chunk = _read(stream)
        if chunk == b"":  # every writer closed the pipe: pytest is exiting
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                return TIMED_OUT
            return FINISHED
        if chunk:
            output.feed(chunk)
            if limit and output.total > limit:
                return OUTPUT_LIMIT


def _read(stream: int) -> bytes | None:
    """Up to 64 KiB from a non-blocking pipe; None when nothing is there yet."""
    try:
        return os.read(stream, 1 << 16)
    except BlockingIOError:
        return None


def _drain(stream: int, output: _Tail, most: int = 1 << 20) -> None:
    taken = 0
    while taken < most:
        chunk = _read(stream)
        if not chunk:
            return
        output.feed(chunk)
        taken += len(chunk)


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _make_owner_writable(root: Path) -> None:
    """Copies keep their source's mode; tests expect to modify their fixtures (the
    benchmark folders are read-only), so everything in the workspace becomes writable."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and not mode & stat.S_IWUSR:
                os.chmod(path, stat.S_IMODE(mode) | stat.S_IWUSR)


def _hand_over(root: Path, uid: int) -> None:
    """Give the workspace to the uid the sandboxed code runs as: it must write there, and only there."""
    os.lchown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _read_events(path: Path) -> list[dict]:
    """The plugin's events. Parsed as one JSON array when every line is whole (the usual case, a few
    times faster than a line at a time); else line by line, skipping lines cut short by a kill and
    anything that is not an event (the code under test can write to the file)."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return []
    try:
        parsed = json.loads("[" + ",".join(lines) + "]")
    except json.JSONDecodeError:
        parsed = []
        for line in lines:
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
    return [event for event in parsed if isinstance(event, dict)]


def _phase_outcome(event: dict) -> Outcome | None:
    """Outcome that one setup/call/teardown report implies, or None if it changes nothing."""
    when, outcome, xfail = event.get("when"), event.get("outcome"), event.get("wasxfail")
    if outcome == "failed":
        return Outcome.FAILED if when == "call" else Outcome.ERROR
    if outcome == "skipped":
        return Outcome.XFAIL if xfail else Outcome.SKIPPED
    if outcome == "passed" and when == "call":
        return Outcome.XPASS if xfail else Outcome.PASSED
    return None


def _combine(events: list[dict], reason: str) -> tuple[list[TestResult], list[CollectionError], int | None]:
    """Fold the event stream into one result per test.

    A test whose teardown never reported (the run was killed in its call, or
    in a fixture's setup or teardown) is an error, for `reason`, unless it had
    already failed.
    """
    results: dict[str, TestResult] = {}
    started: list[str] = []
    finished: set[str] = set()
    collection_errors: list[CollectionError] = []
    collected: int | None = None
    for event in events:
        kind = event.get("event")
        if kind == "collect_error":
            collection_errors.append(CollectionError(nodeid=event["nodeid"], message=event.get("message", "")))
        elif kind == "collected":
            collected = int(event["count"])
        elif kind == "start":
            started.append(event["nodeid"])
        elif kind == "report":
            nodeid = event["nodeid"]
            if event.get("when") == "teardown":
                finished.add(nodeid)
            outcome = _phase_outcome(event)
            current = results.get(nodeid)
            duration = (current.duration if current else 0.0) + float(event.get("duration") or 0.0)
            if outcome is None:
                if current:
                    current.duration = duration
                continue
            if current and current.outcome in (Outcome.FAILED, Outcome.ERROR):
                current.duration = duration  # the first failure is the one that explains
                continue
            results[nodeid] = TestResult(nodeid=nodeid, outcome=outcome, duration=duration,
                                         message=event.get("message", ""))
    for nodeid in started:
        current = results.get(nodeid)
        if nodeid not in finished and not (current and current.outcome in (Outcome.FAILED, Outcome.ERROR)):
            results[nodeid] = TestResult(nodeid=nodeid, outcome=Outcome.ERROR, message=reason,
                                         duration=current.duration if current else 0.0)
    return list(results.values()), collection_errors, collected
