"""Hostile generated code: the runner survives it, reports it, and the host is left as it was.

Each case runs real hostile test code in the sandbox while the host watches
from outside: the run's processes (by the workspace path in their command
lines, not by a machine-wide count that other work on the machine would
disturb), their memory, the port, the project's files. Cases whose containment
needs namespaces or cgroups skip, with the reason, where the probe says they
are not available; cases that would harm the host if containment failed
check inside the hostile code that they are contained before acting.
"""
from __future__ import annotations

import hashlib
import os
import resource
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from projectgen.evaluation import runner as runner_module
from projectgen.evaluation.report import Outcome, TestReport
from projectgen.evaluation.runner import RunnerSettings, SandboxRunner
from projectgen.evaluation.sandbox import NAMESPACES, NO_ISOLATION, Containment, Limits
from projectgen.evaluation.sandbox_session import OUTPUT_TAIL_CHARS
from test_support import free_port, make_task

PROJECT = Path(__file__).resolve().parents[2]
GOOD_MODULE = {"calc.py": "def add(a, b):\n    return a + b\n"}
MIB = 1024**2


@pytest.fixture(scope="module")
def containment(env_cache: Path) -> Containment:
    """What the sandbox enforces on this machine (probed once)."""
    return SandboxRunner(RunnerSettings(cache_dir=env_cache)).containment()


def make_runner(env_cache: Path, workdir: Path, **overrides) -> SandboxRunner:
    """A runner whose workspaces live under `workdir`, so the run's processes carry it in their command line."""
    settings = RunnerSettings(cache_dir=env_cache, workdir=workdir, timeout=overrides.pop("timeout", 60), **overrides)
    return SandboxRunner(settings)


def outcomes(report: TestReport) -> dict[str, Outcome]:
    return {t.nodeid.split("::")[-1]: t.outcome for t in report.tests}


def message(report: TestReport, name: str) -> str:
    return next(t.message for t in report.tests if t.nodeid.endswith("::" + name))


# -- watching the host ------------------------------------------------------------------
def run_processes(marker: str) -> list[int]:
    """Host pids of a run: every process it forks carries the workspace path in its command line."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def leftovers(marker: str, patience: float = 10.0) -> list[int]:
    """The run's processes still alive after `patience` seconds (a killed PID namespace takes a moment)."""
    deadline = time.monotonic() + patience
    while (alive := run_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def anonymous_memory(pids: list[int]) -> int:
    """Bytes of anonymous memory (heap, not files) the given processes hold, summed."""
    total = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        total += sum(int(line.split()[1]) * 1024 for line in lines if line.startswith("RssAnon:"))
    return total


@dataclass
class HostWatch:
    """Samples, while a run goes on, how many processes it has and how much memory they hold."""

    marker: str
    peak_processes: int = 0
    peak_memory: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> None:
        while not self.stop.is_set():
            pids = run_processes(self.marker)
            self.peak_processes = max(self.peak_processes, len(pids))
            self.peak_memory = max(self.peak_memory, anonymous_memory(pids))
            time.sleep(0.02)


@contextmanager
def watching(marker: str) -> Iterator[HostWatch]:
    watch = HostWatch(marker)
    thread = threading.Thread(target=watch.sample, daemon=True)
    thread.start()
    try:
        yield watch
    finally:
        watch.stop.set()
        thread.join()


def cgroups_left() -> list[Path]:
    """This process's per-run cgroups that were not removed (they sit a few levels below /sys/fs/cgroup).

    Other processes' cgroups come and go while we look (the suite runs on several workers), so a folder
    that vanishes during the walk is passed over instead of failing it."""
    prefix = f"projectgen-{os.getpid()}-"
    found: list[Path] = []

    def walk(folder: str, depth: int) -> None:
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:  # removed since it was listed
            return
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except FileNotFoundError:
                continue
            if entry.name.startswith(prefix):
                found.append(Path(entry.path))
            elif depth < 4:
                walk(entry.path, depth + 1)

    walk("/sys/fs/cgroup", 0)
    return found


def requires(condition: bool, reason: str) -> None:
    if not condition:
        pytest.skip(reason)


# -- fork bomb --------------------------------------------------------------------------
BOUNDED_BOMB = """
    import os, time

    def test_before(): pass

    def test_bomb():
        # 9 rounds of fork in every process: 512 processes if nothing stops it (the guard
        # that keeps this test safe on a machine where the sandbox does not hold)
        me = os.getpid()
        refused_r, refused_w = os.pipe()
        release_r, release_w = os.pipe()
        for _ in range(9):
            try:
                os.fork()
            except OSError:
                os.write(refused_w, b"x")
        os.close(release_w)  # this process has forked all it could
        if os.getpid() != me:
            try:
                os.read(release_r, 1)  # end of file once every process has: they all live at once
                time.sleep(1)  # long enough for the host to count them
            finally:
                os._exit(0)  # a forked copy of pytest must never go on with the session
        while True:
            try:
                os.wait()
            except ChildProcessError:
                break
        os.close(refused_w)
        refused = b""
        while chunk := os.read(refused_r, 4096):
            refused += chunk
        assert not refused, f"{len(refused)} forks refused"

    def test_after(): pass
"""
BOMB_LIMIT = 64


def run_bounded_bomb(tmp_path: Path, env_cache: Path, **settings) -> tuple[TestReport, HostWatch, str]:
    task = make_task(tmp_path / "bomb", {"test_bomb.py": BOUNDED_BOMB})
    marker = str(tmp_path / "ws")
    sandbox = make_runner(env_cache, tmp_path / "ws", limits=Limits(processes=BOMB_LIMIT), timeout=60, **settings)
    sandbox.containment()  # probe before watching: the probe's processes are not the run's
    with watching(marker) as watch:
        report = sandbox.evaluate(task, GOOD_MODULE, "unit")
    return report, watch, marker


def test_fork_bomb_is_bounded_by_the_process_limit(tmp_path: Path, env_cache: Path, containment: Containment) -> None:
    requires(containment.processes_bounded, "this machine cannot bound a run's processes (see the runner's warning)")
    report, watch, marker = run_bounded_bomb(tmp_path, env_cache)
    got = outcomes(report)
    assert got == {"test_before": Outcome.PASSED, "test_bomb": Outcome.FAILED, "test_after": Outcome.PASSED}
    assert "forks refused" in message(report, "test_bomb")
    # the limit counts tasks of the code under test; the launcher, unshare and one straggler sample may add a few
    assert watch.peak_processes <= BOMB_LIMIT + 8, watch.peak_processes
    assert leftovers(marker) == []
    assert cgroups_left() == []


def test_fork_bomb_control_without_containment_reaches_its_guard(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shows the watch above can fail: with no namespaces and no cgroup, the guarded bomb grows far past the limit."""
    monkeypatch.setattr(runner_module, "probe_containment",
                        lambda wanted, scratch: Containment(NO_ISOLATION, notes=("control run",)))
    report, watch, marker = run_bounded_bomb(tmp_path, env_cache, isolation="none")
    assert outcomes(report)["test_bomb"] is Outcome.PASSED  # nothing refused a fork
    assert watch.peak_processes > BOMB_LIMIT + 8, watch.peak_processes
    assert leftovers(marker) == []


@pytest.mark.slow
def test_endless_fork_bomb_ends_at_the_timeout_and_leaves_nothing(
    tmp_path: Path, env_cache: Path, containment: Containment,
) -> None:
    requires(containment.processes_bounded, "this machine cannot bound a run's processes: an endless fork bomb "
                                            "would take it down")
    task = make_task(tmp_path / "bomb", {"test_bomb.py": """
        import os
        def test_before(): pass
        def test_bomb():
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
    """})
    marker = str(tmp_path / "ws")
    sandbox = make_runner(env_cache, tmp_path / "ws", limits=Limits(processes=256), timeout=8)
    sandbox.containment()
    started = time.monotonic()
    with watching(marker) as watch:
        report = sandbox.evaluate(task, GOOD_MODULE, "unit")
    assert report.timed_out and report.status == "timeout"
    assert outcomes(report) == {"test_before": Outcome.PASSED, "test_bomb": Outcome.ERROR}
    assert "timed out" in message(report, "test_bomb")
    assert watch.peak_processes <= 256 + 8
    assert time.monotonic() - started < 8 + 20  # killing the bomb does not take long
    assert leftovers(marker) == []
    assert cgroups_left() == []


# -- memory -----------------------------------------------------------------------------
def test_memory_hog_across_processes_is_bounded_for_the_whole_run(
    tmp_path: Path, env_cache: Path, containment: Containment,
) -> None:
    requires(containment.cgroups, "no per-run cgroup here: memory is bounded per process only")
    task = make_task(tmp_path / "mem", {"test_mem.py": """
        import os, time
        def test_before(): pass
        def test_hog():
            kids = []
            for _ in range(4):  # 4 x 500 MiB, each under the per-process limit
                pid = os.fork()
                if pid == 0:
                    code = 3
                    try:
                        blob = b"x" * (500 * 1024 ** 2)
                        time.sleep(1)
                        code = 0
                    finally:
                        os._exit(code)  # a forked copy of pytest must never go on with the session
                kids.append(pid)
            statuses = [os.waitpid(pid, 0)[1] for pid in kids]
            assert statuses == [0, 0, 0, 0]
        def test_after(): pass
    """})
    sandbox = make_runner(env_cache, tmp_path / "ws", limits=Limits(memory_bytes=768 * MIB))
    sandbox.containment()
    with watching(str(tmp_path / "ws")) as watch:
        report = sandbox.evaluate(task, GOOD_MODULE, "unit")
    got = outcomes(report)
    assert got == {"test_before": Outcome.PASSED, "test_hog": Outcome.FAILED, "test_after": Outcome.PASSED}
    assert "reached its memory limit (768 MiB)" in report.output_tail
    assert 0 < watch.peak_memory < 1536 * MIB  # unbounded, the hog takes 2 GiB
    assert leftovers(str(tmp_path / "ws")) == []


# -- output -----------------------------------------------------------------------------
def test_endless_captured_output_is_bounded_by_the_file_size_limit(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "spam", {"test_spam.py": """
        def test_before(): pass
        def test_spam():
            while True:
                print("spam " * 2000)
        def test_after(): pass
    """})
    sandbox = make_runner(env_cache, tmp_path / "ws",
                          limits=Limits(file_size_bytes=32 * MIB, output_bytes=8 * MIB))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = sandbox.evaluate(task, GOOD_MODULE, "unit")
    got = outcomes(report)
    assert got == {"test_before": Outcome.PASSED, "test_spam": Outcome.FAILED, "test_after": Outcome.PASSED}
    assert "File too large" in message(report, "test_spam")
    assert len(report.output_tail) < OUTPUT_TAIL_CHARS + 500
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 64 * 1024  # KiB: the runner kept a tail
    assert not any((tmp_path / "ws").iterdir())  # the workspace, capture file included, is gone


def test_output_flood_past_the_capture_stops_the_run_with_a_reason(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "flood", {"test_flood.py": """
        import sys
        def test_before(): pass
        def test_flood(capfd):
            with capfd.disabled():  # straight to the runner's pipe
                while True:
                    sys.stdout.write("flood " * 10000)
        def test_never_reached(): pass
    """})
    sandbox = make_runner(env_cache, tmp_path / "ws", limits=Limits(output_bytes=8 * MIB), timeout=120)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = sandbox.evaluate(task, GOOD_MODULE, "unit")
    assert outcomes(report) == {"test_before": Outcome.PASSED, "test_flood": Outcome.ERROR}
    assert "printed more than 8 MiB" in message(report, "test_flood")
    assert report.total == 3 and not report.timed_out
    assert report.duration < 60  # stopped at the limit, not at the timeout
    assert report.output_tail.rstrip().endswith("(limit 8 MiB)")
    assert len(report.output_tail) < OUTPUT_TAIL_CHARS + 500
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 64 * 1024
    assert leftovers(str(tmp_path / "ws")) == []


# -- hanging fixtures -------------------------------------------------------------------
HANGING_FIXTURES = """
    import subprocess, time, pytest

    @pytest.fixture
    def stuck_setup():
        # a daemon in its own session escapes a process-group kill
        subprocess.Popen(["sleep", "4321.7"], start_new_session=True)
        time.sleep(100000)

    @pytest.fixture
    def stuck_teardown():
        yield
        subprocess.Popen(["sleep", "4321.7"], start_new_session=True)
        time.sleep(100000)

    def test_before(): pass
    def test_hangs(stuck_{phase}): pass
    def test_after(): pass
"""


@pytest.mark.parametrize("phase", ["setup", "teardown"])
def test_fixture_sleeping_forever_times_out_and_its_daemon_dies_too(
    tmp_path: Path, env_cache: Path, containment: Containment, phase: str,
) -> None:
    task = make_task(tmp_path / "hang", {"test_hang.py": HANGING_FIXTURES.replace("{phase}", phase)})
    with watching("4321.7") as daemon:
        report = make_runner(env_cache, tmp_path / "ws", timeout=5).evaluate(task, GOOD_MODULE, "unit")
    assert report.timed_out and report.status == "timeout"
    # a test whose teardown never ended did not pass, even though its body did
    assert outcomes(report) == {"test_before": Outcome.PASSED, "test_hangs": Outcome.ERROR}
    assert "timed out" in message(report, "test_hangs")
    assert report.total == 3
    assert leftovers(str(tmp_path / "ws")) == []
    assert daemon.peak_processes >= 1  # the daemon did start
    left = leftovers("4321.7")
    for pid in left:
        os.kill(pid, signal.SIGKILL)  # where nothing could, clean up after the hostile code
    requires(containment.isolation == NAMESPACES or containment.cgroups,
             "without namespaces or cgroups a daemon that left the process group outlives the run")
    assert left == []


# -- killing the parent -----------------------------------------------------------------
KILLERS = """
    import os, signal, subprocess, pytest

    IN_NAMESPACE = os.getppid() == 1  # the sandbox's own init started the tests

    def test_before(): pass

    def test_kill_parent():
        os.kill(os.getppid(), signal.SIGKILL)

    def test_kill_everything():
        if not IN_NAMESPACE:  # only where a PID namespace limits "everything" to the run itself
            pytest.skip("not in a PID namespace")
        child = subprocess.Popen(["sleep", "100"])
        os.kill(-1, signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL

    def test_kill_the_runner():
        if not IN_NAMESPACE:
            pytest.skip("not in a PID namespace")
        os.kill(int(os.environ["RUNNER_PID"]), signal.SIGKILL)

    def test_killpg():
        os.killpg(os.getpgrp(), signal.SIGKILL)

    def test_after(): pass
"""


@contextmanager
def decoy() -> Iterator[subprocess.Popen]:
    """A host process beside the runner that no sandboxed code may reach."""
    process = subprocess.Popen(["sleep", "4321.9"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_code_killing_its_parent_or_group_does_not_reach_the_runner(
    tmp_path: Path, env_cache: Path, containment: Containment,
) -> None:
    task = make_task(tmp_path / "kill", {"test_kill.py": KILLERS}, env_vars={"RUNNER_PID": str(os.getpid())})
    with decoy() as bystander:
        report = make_runner(env_cache, tmp_path / "ws", timeout=60).evaluate(task, GOOD_MODULE, "unit")
        assert bystander.poll() is None  # still running
    if containment.isolation == NAMESPACES and containment.run_as is not None:
        # The sandbox's init is not the tests' to kill, the runner is not in their namespace, and killing
        # their own process group ends only their own run. It ended without the recorder's finish event and
        # nobody stopped it: the passes it reported are not counted, and say so
        got = outcomes(report)
        assert got == {"test_before": Outcome.FAILED, "test_kill_parent": Outcome.FAILED,
                       "test_kill_everything": Outcome.FAILED, "test_kill_the_runner": Outcome.FAILED,
                       "test_killpg": Outcome.ERROR}, got
        for passed in ("test_before", "test_kill_everything"):
            assert message(report, passed).startswith("[projectgen] not counted: the test process ended")
        assert "PermissionError" in message(report, "test_kill_parent")
        assert "ProcessLookupError" in message(report, "test_kill_the_runner")
        assert "died" in message(report, "test_killpg")
    else:
        assert_run_ended_by_a_killer(report)
    assert leftovers(str(tmp_path / "ws")) == []


def assert_run_ended_by_a_killer(report: TestReport) -> None:
    """The run died once its parent was killed: the test that was running then is an error saying so (the
    parent's death reaches the tests a moment later, so it may be a later test than the killer), nothing after
    it ran, and test_after never did."""
    order = ["test_before", "test_kill_parent", "test_kill_everything", "test_kill_the_runner", "test_killpg",
             "test_after"]
    got = outcomes(report)
    assert got["test_before"] is Outcome.PASSED and "test_after" not in got, got
    errors = [name for name, outcome in got.items() if outcome is Outcome.ERROR]
    if not errors:
        # The runner reaped the tree between two tests: the rest simply never ran.
        assert got.get("test_kill_parent") is Outcome.PASSED and "test_killpg" not in got, got
        return
    assert len(errors) == 1 and order.index(errors[0]) >= order.index("test_kill_parent"), got
    assert all(order.index(name) <= order.index(errors[0]) for name in got), got
    assert "died" in message(report, errors[0])


def test_code_killing_its_parent_without_namespaces_ends_only_its_own_run(tmp_path: Path, env_cache: Path) -> None:
    task = make_task(tmp_path / "kill", {"test_kill.py": KILLERS})
    with decoy() as bystander:
        report = make_runner(env_cache, tmp_path / "ws", isolation="none").evaluate(task, GOOD_MODULE, "unit")
        assert bystander.poll() is None
    assert_run_ended_by_a_killer(report)
    assert leftovers(str(tmp_path / "ws")) == []


# -- the project's own folders ----------------------------------------------------------
def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_code_cannot_write_the_projectgen_checkout_or_the_task_folder(
    tmp_path: Path, env_cache: Path, containment: Containment,
) -> None:
    requires(containment.isolation == NAMESPACES, "without namespaces the filesystem is not isolated")
    marker = f"hostile-marker-{secrets.token_hex(4)}"
    launcher = PROJECT / "projectgen" / "evaluation" / "sandbox_files" / "launcher.py"
    task = make_task(tmp_path / "task", {"test_write.py": """
        import os
        P, T, M = os.environ["PROJECT"], os.environ["TASK"], os.environ["MARKER"]

        def test_create_in_checkout(): open(os.path.join(P, M), "w").close()
        def test_create_in_package(): open(os.path.join(P, "projectgen", "evaluation", M), "w").close()
        def test_open_launcher_for_writing(): open(os.environ["LAUNCHER"], "a").close()  # writes nothing
        def test_mkdir_in_checkout(): os.mkdir(os.path.join(P, M + "-dir"))
        def test_through_a_symlink():
            os.symlink(P, "link-to-checkout")
            open(os.path.join("link-to-checkout", M), "w").close()
        def test_edit_task_tests(): open(os.path.join(T, "unit_tests", "test_write.py"), "a").close()
        def test_create_in_task(): open(os.path.join(T, M), "w").close()
    """}, env_vars={"PROJECT": str(PROJECT), "TASK": str(tmp_path / "task"), "MARKER": marker,
                    "LAUNCHER": str(launcher)})
    launcher_before, tests_before = file_digest(launcher), file_digest(task.root / "unit_tests" / "test_write.py")
    try:
        report = make_runner(env_cache, tmp_path / "ws").evaluate(task, GOOD_MODULE, "unit")
    finally:
        created = [p for p in (PROJECT / marker, PROJECT / "projectgen" / "evaluation" / marker,
                               PROJECT / (marker + "-dir"), task.root / marker) if p.exists()]
        for path in created:
            path.rmdir() if path.is_dir() else path.unlink()
    assert created == []
    assert set(outcomes(report).values()) == {Outcome.FAILED} and len(report.tests) == 7
    assert file_digest(launcher) == launcher_before
    assert file_digest(task.root / "unit_tests" / "test_write.py") == tests_before


# -- host kernel settings ---------------------------------------------------------------
def test_code_cannot_open_host_kernel_settings_for_writing(
    tmp_path: Path, env_cache: Path, containment: Containment,
) -> None:
    """Mapped to host root, code could set sysctls (core_pattern runs a program as root) or leave its cgroup.

    The hostile code only opens the files for writing and writes nothing, so this is safe to run even
    where the sandbox would not hold.
    """
    requires(containment.isolation == NAMESPACES, "without namespaces /proc/sys and /sys are the host's")
    targets = ["/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches",
               "/sys/power/state", "/sys/kernel/mm/transparent_hugepage/enabled"]
    targets += [str(p) for p in Path("/sys/fs/cgroup").glob("*/cgroup.procs")][:3]
    task = make_task(tmp_path / "sysctl", {"test_sysctl.py": """
        import os, pytest

        @pytest.mark.parametrize("path", os.environ["TARGETS"].split(":"))
        def test_open_for_writing(path):
            if not os.path.exists(path):
                pytest.skip("not here")
            with pytest.raises(OSError):
                os.close(os.open(path, os.O_WRONLY))
    """}, env_vars={"TARGETS": ":".join(targets)})
    report = make_runner(env_cache, tmp_path / "ws").evaluate(task, GOOD_MODULE, "unit")
    opened = {test.nodeid.split("[")[1].rstrip("]"): test.outcome for test in report.tests}
    assert all(opened[path] is Outcome.PASSED for path in targets if path.startswith("/proc/sys")), opened
    assert all(opened[path] is Outcome.SKIPPED for path in targets if path.startswith("/sys")), opened  # no /sys


# -- secrets ----------------------------------------------------------------------------
@contextmanager
def fake_home() -> Iterator[tuple[Path, str]]:
    """A HOME holding a fake SSH key, outside the temp folders the sandbox replaces anyway."""
    parent = next((p for p in ("/run", "/var/lib", "/opt") if os.access(p, os.W_OK)), None)
    if parent is None:
        pytest.skip("no writable folder outside /tmp for a fake HOME")
    home = Path(tempfile.mkdtemp(prefix="projectgen-fake-home-", dir=parent))
    secret = f"PROJECTGEN-FAKE-KEY-{secrets.token_hex(8)}"
    try:
        (home / ".ssh").mkdir(mode=0o700)
        (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n")
        yield home, secret
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=False)


def test_code_cannot_read_the_users_ssh_keys_or_environment(
    tmp_path: Path, env_cache: Path, containment: Containment, monkeypatch: pytest.MonkeyPatch,
) -> None:
    requires(containment.isolation == NAMESPACES, "without namespaces home folders are not hidden")
    with fake_home() as (home, secret):
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("PROJECTGEN_FAKE_TOKEN", secret)
        task = make_task(tmp_path / "ssh", {"test_ssh.py": """
            import glob, os, pwd
            H = os.environ["REAL_HOME"]

            def test_read_key(): print(open(os.path.join(H, ".ssh", "id_ed25519")).read())
            def test_list_home(): assert not os.path.exists(H)  # nothing of the host's homes is there
            def test_root_ssh_hidden(): assert glob.glob(os.path.join(pwd.getpwuid(0).pw_dir, ".ssh", "*")) == []
            def test_environment(): assert "PROJECTGEN_FAKE_TOKEN" not in os.environ
            def test_walk_for_keys():
                found = [os.path.join(d, f) for top in ("/run", "/root", "/home", os.path.dirname(H))
                         for d, _, files in os.walk(top) for f in files if f.startswith("id_")]
                print(found)
                for path in found:
                    try:
                        print(open(path, "rb").read())
                    except OSError:
                        pass
                assert not any(H in path for path in found)
        """}, env_vars={"REAL_HOME": str(home)})
        report = make_runner(env_cache, tmp_path / "ws").evaluate(task, GOOD_MODULE, "unit")
    got = outcomes(report)
    assert got == {"test_read_key": Outcome.FAILED, "test_list_home": Outcome.PASSED,
                   "test_root_ssh_hidden": Outcome.PASSED, "test_environment": Outcome.PASSED,
                   "test_walk_for_keys": Outcome.PASSED}
    assert "FileNotFoundError" in message(report, "test_read_key")
    assert secret not in report.model_dump_json()


# -- ports ------------------------------------------------------------------------------
@dataclass
class Knocker:
    """Keeps trying to connect to a port on the host's loopback while a run goes on."""

    port: int
    connected: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def knock(self) -> None:
        while not self.stop.is_set():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                self.connected += 1
            except OSError:
                pass
            time.sleep(0.05)


LISTENER = """
    import os, socket, time

    def test_listen():
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("0.0.0.0", int(os.environ["PORT"])))
        server.listen(5)
        socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=2).close()  # its own loopback works
        time.sleep(1.5)  # while the host knocks
"""


def listen_and_knock(tmp_path: Path, env_cache: Path, name: str, **settings) -> tuple[TestReport, Knocker]:
    port = free_port()
    task = make_task(tmp_path / name, {"test_listen.py": LISTENER}, env_vars={"PORT": str(port)})
    sandbox = make_runner(env_cache, tmp_path / f"ws-{name}", **settings)
    sandbox.containment()
    knocker = Knocker(port)
    thread = threading.Thread(target=knocker.knock, daemon=True)
    thread.start()
    try:
        report = sandbox.evaluate(task, GOOD_MODULE, "unit")
    finally:
        knocker.stop.set()
        thread.join()
    return report, knocker


def test_a_port_opened_by_the_code_is_not_reachable_from_the_host(
    tmp_path: Path, env_cache: Path, containment: Containment,
) -> None:
    requires(containment.isolation == NAMESPACES, "without namespaces the network is not isolated")
    isolated, knocked = listen_and_knock(tmp_path, env_cache, "isolated")
    # control: the same listener without isolation is reached, so the knocking can see one
    control, control_knocks = listen_and_knock(tmp_path, env_cache, "open", isolation="none")
    assert outcomes(isolated) == {"test_listen": Outcome.PASSED}
    assert knocked.connected == 0
    assert outcomes(control) == {"test_listen": Outcome.PASSED}
    assert control_knocks.connected > 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", knocked.port), timeout=1).close()
