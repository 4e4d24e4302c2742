"""One sandboxed session, from the host's side: its folder, its steps, and what came back from them.

A session is one launch of the sandbox (`sandbox_files/launcher.py`) running a few steps
one after another in the same workspace (the install step, then the tests). Its folder
(`SessionFolder`) holds the workspace the runner fills, a control folder of files the
runner writes and the steps may only read, a mount point for the sandbox's new root and the
private folders (home, temp, install prefix). What the steps print, how each ended and what
the test recorder says come back through pipes, never through files in the workspace: the
code under test can write those, replace them with a FIFO or a link, or fill them. The host
keeps the end of each step's output, caps what it reads, and stops the session when it
prints too much or outlives its steps' timeouts (the launcher enforces each step's timeout
itself; the host's deadline is the backstop). How each step ended comes with what its processes used
(CPU time, peak resident memory, wall time), which the launcher reads from the kernel, outside the code
under test: `StepUsage`.
"""
from __future__ import annotations

import fcntl
import marshal
import os
import re
import secrets
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.evaluation.cleanup import remove_tree
from projectgen.evaluation.report import Outcome, ResourceUsage, TestReport, TestResult
from projectgen.evaluation.results_channel import ChannelEvents, ChannelReader
from projectgen.evaluation.sandbox import Containment, Limits, RunCgroup, sandbox_prefix, start_sandboxed

FINISHED, TIMED_OUT, OUTPUT_LIMIT, NOT_RUN, DIED = "finished", "timed out", "output limit", "not run", "died"
SETUP_FAILED = 120
OUTPUT_TAIL_CHARS = 6000
CHANNEL_LIMIT = 64 * 1024**2  # bytes of recorder events read from one session; the rest is dropped
BACKSTOP_SECONDS = 15.0  # the host's deadline past the steps' own timeouts
# The host reads the steps' output and the recorder's events at most this often: woken by every line, it
# took 800 wakeups (and as many wake-ups of it by the writer) for a suite of 267 tests.
QUIET_SECONDS = 0.02
BULK_PIPE_BYTES = 1 << 20  # F_SETPIPE_SZ of those pipes: what a writer may get ahead of a quiet host
READ_BYTES = 1 << 16
URGENT = ("log", "status")  # the launcher's own pipes: read at once, never after a quiet period
# What the launcher says of the suite's mounts (`launcher.run_steps`), as a report says it.
SUITE_PROBLEMS = {"swapped": "the suite's {path} was no longer the suite's read-only mount after the {step} step",
                  "displaced": "a step before the {step} step wrote where the suite goes ({path})"}
FOLDER_PREFIX = "projectgen-ws-"
STEPS_FILE = "steps.marshal"
FOLDER_PATTERN = re.compile(rf"^{FOLDER_PREFIX}(\d+)-")


@dataclass(frozen=True)
class SessionFolder:
    """The host folder of one session (`projectgen-ws-<pid>-<label>-*`: the pid lets a later runner sweep
    the folder of one that died)."""

    root: Path

    @classmethod
    def create(cls, parent: Path | None, label: str) -> SessionFolder:
        if parent:
            Path(parent).mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-{label}-", dir=parent))
        folder = cls(root)
        for path in (folder.workspace, folder.control, folder.mountpoint, *folder.private):
            path.mkdir()
        return folder

    @property
    def workspace(self) -> Path:
        """What the tests run in: the candidate's files and the suite (copied into the sandbox's own disk)."""
        return self.root / "repo"

    @property
    def control(self) -> Path:
        """Files the runner writes for the steps, bound read-only: steps, configuration, the test recorder's."""
        return self.root / "control"

    @property
    def mountpoint(self) -> Path:
        return self.root / "mnt"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def install(self) -> Path:
        """The install step's prefix (`pip install --prefix`): in the workspace's disk, never the environment."""
        return self.root / "install"

    @property
    def private(self) -> tuple[Path, ...]:
        """Folders the steps may write besides the workspace."""
        return self.home, self.tmp, self.install

    @property
    def protect_list(self) -> Path:
        return self.control / "protected.txt"

    def remove(self) -> None:
        remove_tree(self.root)


@dataclass(frozen=True)
class Step:
    """One command of a session: run in the workspace with exactly `env`, stopped after `timeout` seconds.

    `channel`: it gets the test recorder's pipes (PROJECTGEN_RESULTS_FD, PROJECTGEN_SECRET_FD).
    `stop_on_failure`: the session ends when it fails (an install step, a build).
    `output_keep`: how many bytes of the end of its output the host keeps (a step that prints a test
    report keeps all of it, up to its cap)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    timeout: float
    channel: bool = False
    stop_on_failure: bool = False
    output_keep: int = OUTPUT_TAIL_CHARS
    cwd: str = ""  # the folder of the workspace it runs in ('' = the workspace itself)
    suite: bool = True  # runs with the suite mounted; False: before it is (an install: it never sees the suite)


class Tail:
    """The last `keep` bytes of a stream and its total length: a flood costs no memory."""

    def __init__(self, keep: int = OUTPUT_TAIL_CHARS) -> None:
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
class StepUsage:
    """What a step's processes used, as the launcher read it from the kernel (`launcher.measure_step`):
    their CPU time (user + system), the largest peak resident size among them, and the step's wall time."""

    cpu_seconds: float
    peak_rss_kb: int
    wall_seconds: float


@dataclass
class StepResult:
    """How one step ended: FINISHED (with its exit status), TIMED_OUT, OUTPUT_LIMIT, DIED or NOT_RUN, and
    what it used when the launcher saw it end (None when the session was stopped first)."""

    name: str
    stop: str = NOT_RUN
    exit_status: int | None = None
    output: Tail = field(default_factory=Tail)
    usage: StepUsage | None = None


@dataclass
class SessionResult:
    steps: list[StepResult]
    channel: ChannelEvents = field(default_factory=lambda: ChannelEvents([], None))  # the recorder's, checked
    channel_overflow: bool = False
    setup_error: str | None = None  # the sandbox could not be set up: no step ran
    oom_kills: int = 0
    suite_problem: str | None = None  # the suite's mounts were tampered with (`SUITE_PROBLEMS`)


def run_session(containment: Containment, folder: SessionFolder, binds: tuple[str, ...], limits: Limits,
                steps: list[Step], cgroup: RunCgroup | None = None,
                prepare: Callable[[], None] | None = None) -> SessionResult:
    """Run `steps` in one sandbox over `folder`; `prepare` fills the workspace while the launcher starts."""
    results = [StepResult(step.name, output=Tail(step.output_keep)) for step in steps]
    secret = secrets.token_hex(32).encode()
    pipes = _Pipes.open(len(steps), any(step.channel for step in steps), secret)
    try:
        _write_steps(folder, steps, pipes)
        prefix = sandbox_prefix(containment, folder, binds, limits, cgroup, pipes.status[1])
        process = start_sandboxed(prefix, cgroup, prepare, cwd=folder.root, env={"LANG": "C.UTF-8"},
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                  pass_fds=pipes.inherited())
        pipes.close_inherited()
        pump = _Pump(process, pipes, results, limits.output_bytes, ChannelReader(secret, CHANNEL_LIMIT),
                     deadline=time.monotonic() + sum(step.timeout for step in steps) + BACKSTOP_SECONDS)
        try:
            pump.run()
        finally:
            _kill(process, pump.step_groups)
            if cgroup:
                cgroup.kill()
    finally:
        pipes.close()
    log = pump.log.text().strip()
    setup_error = None
    if process.returncode == SETUP_FAILED and all(result.stop == NOT_RUN for result in results):
        setup_error = log.splitlines()[-1] if log else "the sandbox could not be set up"
    elif process.returncode not in (0, None) and not pump.stopped:
        for result in results:
            if result.stop == NOT_RUN and pump.finished_steps == results.index(result):
                result.stop = DIED  # the launcher died while this step ran
    return SessionResult(results, pump.channel.result(), pump.channel.overflow, setup_error,
                         cgroup.oom_kills() if cgroup else 0, pump.suite_problem)


@dataclass
class _Pipes:
    """The host's ends and the launcher's ends of every pipe of a session."""

    status: tuple[int, int]
    outputs: list[tuple[int, int]]
    channel: tuple[int, int] | None
    secret: tuple[int, int] | None

    @classmethod
    def open(cls, steps: int, channel: bool, secret: bytes) -> _Pipes:
        opened = cls(os.pipe(), [os.pipe() for _ in range(steps)], os.pipe() if channel else None,
                     os.pipe() if channel else None)
        for _, write in [*opened.outputs, *([opened.channel] if opened.channel else [])]:
            _enlarge(write)
        if opened.secret:
            os.write(opened.secret[1], secret)
            os.close(opened.secret[1])
            opened.secret = (opened.secret[0], -1)
        return opened

    def inherited(self) -> tuple[int, ...]:
        ends = [self.status[1], *(write for _, write in self.outputs)]
        if self.channel and self.secret:
            ends += [self.channel[1], self.secret[0]]
        return tuple(ends)

    def readers(self) -> list[int]:
        return [self.status[0], *(read for read, _ in self.outputs), *([self.channel[0]] if self.channel else [])]

    def close_inherited(self) -> None:
        for fd in self.inherited():
            _close(fd)
        self.status = (self.status[0], -1)
        self.outputs = [(read, -1) for read, _ in self.outputs]
        if self.channel and self.secret:
            self.channel, self.secret = (self.channel[0], -1), (-1, -1)

    def close(self) -> None:
        for fd in [*self.readers(), *self.inherited()]:
            _close(fd)


def _enlarge(fd: int) -> None:
    """Give a pipe room for what its writer produces while the host is quiet; the default (64 KiB) stays
    where the system refuses (past /proc/sys/fs/pipe-max-size, or the user's pipe pages used up)."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, BULK_PIPE_BYTES)
    except OSError:
        pass


def _close(fd: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


def _write_steps(folder: SessionFolder, steps: list[Step], pipes: _Pipes) -> None:
    """The launcher's steps (marshal: it reads them without importing json): each step's command, environment,
    timeout and descriptors."""
    described = []
    for step, (_, output) in zip(steps, pipes.outputs):
        env = dict(step.env)
        passed: list[int] = []
        if step.channel and pipes.channel and pipes.secret:
            env.update(PROJECTGEN_RESULTS_FD=str(pipes.channel[1]), PROJECTGEN_SECRET_FD=str(pipes.secret[0]))
            passed = [pipes.channel[1], pipes.secret[0]]
        described.append({"name": step.name, "argv": step.argv, "env": env, "cwd": str(folder.workspace / step.cwd),
                          "timeout": step.timeout, "output_fd": output, "pass_fds": passed,
                          "stop_on_failure": step.stop_on_failure, "suite": step.suite})
    (folder.control / STEPS_FILE).write_bytes(marshal.dumps(described))


class _Pump:
    """Reads every pipe of a running session until the launcher ends, the output limit is passed or the
    backstop deadline comes."""

    def __init__(self, process: subprocess.Popen, pipes: _Pipes, results: list[StepResult], limit: int | None,
                 channel: ChannelReader, deadline: float) -> None:
        self.process = process
        self.pipes = pipes
        self.results = results
        self.limit = limit
        self.deadline = deadline
        self.log = Tail(2000)
        self.channel = channel
        self.status_buffer = b""
        self.finished_steps = 0
        self.step_groups: list[int] = []
        self.stopped = False
        self.output_total = 0
        self.suite_problem: str | None = None

    def run(self) -> None:
        """Wake for the launcher's status and log at once; for the steps' output and the recorder's events
        (a line per test event) at most every `QUIET_SECONDS` (`_Pipes.open` enlarges their pipes, so a
        writer does not wait in between)."""
        assert self.process.stdout is not None
        sources = {self.process.stdout.fileno(): "log", self.pipes.status[0]: "status"}
        for index, (read, _) in enumerate(self.pipes.outputs):
            sources[read] = index
        if self.pipes.channel:
            sources[self.pipes.channel[0]] = "channel"
        quiet_until = 0.0
        with selectors.DefaultSelector() as everything, selectors.DefaultSelector() as urgent:
            for fd, source in sources.items():
                os.set_blocking(fd, False)
                everything.register(fd, selectors.EVENT_READ)
                if source in URGENT:
                    urgent.register(fd, selectors.EVENT_READ)
            while sources:
                if self.process.poll() is not None:
                    for fd in list(sources):
                        self._drain(fd, sources[fd])  # what it wrote before it ended; nothing outlives it
                    return
                now = time.monotonic()
                remaining = self.deadline - now
                if remaining <= 0:
                    self._stop(TIMED_OUT)
                    return
                # quiet only while the launcher's own pipes are open: once they closed it is ending, and the
                # rest is read as soon as it ends (not when the quiet period does)
                quiet = quiet_until - now if urgent.get_map() else 0.0
                selector = urgent if quiet > 0 else everything
                for key, _ in selector.select(min(remaining, 0.2, quiet) if quiet > 0 else min(remaining, 0.2)):
                    fd = int(key.fd)
                    source = sources[fd]
                    if not self._read(fd, source):
                        everything.unregister(fd)
                        if source in URGENT:
                            urgent.unregister(fd)
                        del sources[fd]
                    elif source not in URGENT:
                        quiet_until = time.monotonic() + QUIET_SECONDS
                    if self.limit and self.output_total > self.limit:
                        self._stop(OUTPUT_LIMIT)
                        return
        try:  # every pipe closed: the launcher is ending
            self.process.wait(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._stop(TIMED_OUT)

    def _stop(self, why: str) -> None:
        """Stop the session: the step that was running ends for `why`."""
        self.stopped = True
        if self.finished_steps < len(self.results):
            self.results[self.finished_steps].stop = why

    def _read(self, fd: int, source: str | int) -> bool:
        """Take what `fd` has at a wake-up, up to a pipe's worth (a quiet host's pipe holds more than one read,
        and a writer that never stops must not keep the host from its limits); False at end of file."""
        return self._take(fd, source, BULK_PIPE_BYTES)

    def _drain(self, fd: int, source: str | int) -> None:
        """What is left in `fd` once the launcher has ended (at most 4 MiB: a straggler without namespaces
        may still be writing)."""
        self._take(fd, source, 1 << 22)

    def _take(self, fd: int, source: str | int, most: int) -> bool:
        """Read `fd` until it is empty or `most` bytes are taken; False at end of file."""
        taken = 0
        while taken < most:
            try:
                chunk = os.read(fd, READ_BYTES)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            self._consume(source, chunk)
            taken += len(chunk)
            if len(chunk) < READ_BYTES:  # the pipe is empty: no read that would only say so
                return True
        return True

    def _consume(self, source: str | int, chunk: bytes) -> None:
        if source == "log":
            self.log.feed(chunk)
        elif source == "status":
            self._status(chunk)
        elif source == "channel":
            self.channel.feed(chunk)
        else:
            assert isinstance(source, int)
            self.results[source].output.feed(chunk)
            self.output_total += len(chunk)

    def _status(self, chunk: bytes) -> None:
        self.status_buffer += chunk
        *lines, self.status_buffer = self.status_buffer.split(b"\n")
        for line in lines:
            kind, index, *rest = line.decode(errors="replace").split(" ", 2)
            if kind == "started":
                self.step_groups.append(int(rest[0]))
                continue
            if kind in SUITE_PROBLEMS:
                self.suite_problem = self.suite_problem or SUITE_PROBLEMS[kind].format(
                    step=self.results[int(index)].name, path=rest[0] if rest else "?")
                continue
            rest = " ".join(rest).split()
            result = self.results[int(index)]
            result.stop = FINISHED if rest[0] == "finished" else TIMED_OUT
            result.exit_status = None if rest[1] == "-" else int(rest[1])
            if len(rest) == 5:
                cpu_us, rss_kb, wall_us = (int(value) for value in rest[2:])
                result.usage = StepUsage(cpu_seconds=cpu_us / 1e6, peak_rss_kb=rss_kb, wall_seconds=wall_us / 1e6)
            self.finished_steps = int(index) + 1


def _kill(process: subprocess.Popen, step_groups: list[int]) -> None:
    """SIGKILL the launcher's process group and, without namespaces, each step's."""
    for group in [process.pid, *step_groups]:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    if process.stdout:
        process.stdout.close()


def with_suite_problem(report: TestReport, problem: str | None) -> TestReport:
    """`report`, tampered when the launcher found the suite's mounts changed or written over
    (`SessionResult.suite_problem`): no test counts as passed, whatever the tests that ran said."""
    if problem is None:
        return report
    reason = report.tampered or problem
    report.tampered = reason
    report.output_tail += f"\n[projectgen] the suite was tampered with: {problem}; no test counts as passed"
    report.tests = [TestResult(nodeid=test.nodeid, outcome=Outcome.FAILED, duration=test.duration,
                               message=f"[projectgen] not counted: {reason}") for test in report.tests]
    return report


def steps_usage(steps: list[StepResult], cpu_limit: float | None = None) -> ResourceUsage | None:
    """What `steps` used together, as the launcher measured it (`StepUsage`), in a report's terms: CPU and
    wall time summed, the largest peak memory; None when none of them was measured."""
    measured = [step.usage for step in steps if step.usage is not None]
    if not measured:
        return None
    return ResourceUsage(peak_memory_mb=max(usage.peak_rss_kb for usage in measured) / 1024,
                         cpu_seconds=sum(usage.cpu_seconds for usage in measured),
                         wall_seconds=sum(usage.wall_seconds for usage in measured), cpu_limit_cores=cpu_limit)
