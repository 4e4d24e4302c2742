"""Starting and running a sandboxed session: nothing runs before the runner's go-ahead (its cgroup joined,
its workspace filled), a start that cannot be completed runs nothing at all, the launcher enforces each
step's timeout and the session's disk, and nothing of a session outlives a runner that was killed."""
from __future__ import annotations

import base64
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from projectgen.evaluation.cleanup import remove_tree, sweep_leftovers
from projectgen.evaluation.sandbox import NAMESPACES, NO_ISOLATION, Containment, Limits, RunCgroup
from projectgen.evaluation.sandbox_probe import probe_containment
from projectgen.evaluation import sandbox_session
from projectgen.evaluation.sandbox_session import (
    FINISHED,
    NOT_RUN,
    QUIET_SECONDS,
    TIMED_OUT,
    SessionFolder,
    SessionResult,
    Step,
    run_session,
)

SHELL_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.fixture(scope="module")
def containment() -> Containment:
    with tempfile.TemporaryDirectory(prefix="projectgen-probe-") as scratch:
        return probe_containment("auto", Path(scratch))


def namespaces_only(containment: Containment) -> None:
    if containment.isolation != NAMESPACES:
        pytest.skip("namespaces are not available here")


def session(containment: Containment, tmp_path: Path, *scripts: str, limits: Limits | None = None,
            cgroup: RunCgroup | None = None, prepare=None, timeout: float = 60,
            stop_on_failure: bool = False) -> tuple[SessionFolder, SessionResult]:
    """Each script a shell step, run in one session over a new folder in `tmp_path`."""
    folder = SessionFolder.create(tmp_path, "start")
    steps = [Step(f"step{index}", ["/bin/sh", "-c", script], dict(SHELL_ENV, HOME=str(folder.home)), timeout,
                  stop_on_failure=stop_on_failure) for index, script in enumerate(scripts)]
    python = os.path.realpath(sys.executable)
    binds = (sys.base_prefix, str(Path(python).parent))
    return folder, run_session(containment, folder, binds, limits or Limits(), steps, cgroup, prepare)


@pytest.mark.parametrize(("version", "reason"), [(1, "set-up failed"),  # the launcher joins (tasks file)
                                                 (2, "could not move the run into its cgroup")])  # the runner
def test_a_run_that_cannot_join_its_cgroup_never_starts(tmp_path: Path, version: int, reason: str) -> None:
    unwritable = RunCgroup((tmp_path / "no-such-cgroup",), None, version)  # its files cannot be written
    folder, done = session(Containment(NO_ISOLATION), tmp_path, "touch ran", cgroup=unwritable, prepare=lambda: None)
    assert done.setup_error and reason in done.setup_error
    assert done.steps[0].stop == NOT_RUN
    assert not (folder.workspace / "ran").exists()


def test_the_workspace_is_prepared_before_the_command_starts(tmp_path: Path, containment: Containment) -> None:
    box: dict[str, SessionFolder] = {}

    def prepare() -> None:
        (box["folder"].workspace / "prepared.txt").write_text("filled while the launcher started\n")

    folder = SessionFolder.create(tmp_path, "start")
    box["folder"] = folder
    done = run_session(containment, folder, (), Limits(), [Step("cat", ["/bin/cat", "prepared.txt"], SHELL_ENV, 60)],
                       None, prepare)
    assert done.steps[0].output.text() == "filled while the launcher started\n"
    assert (done.steps[0].stop, done.steps[0].exit_status) == (FINISHED, 0)


def test_a_failed_preparation_kills_the_launcher_before_anything_ran(tmp_path: Path,
                                                                    containment: Containment) -> None:
    def prepare() -> None:
        raise RuntimeError("the candidate folder vanished")

    with pytest.raises(RuntimeError, match="vanished"):
        session(containment, tmp_path, f"touch {tmp_path}/ran", prepare=prepare)
    assert not (tmp_path / "ran").exists()


def test_the_command_runs_inside_the_runs_cgroup(tmp_path: Path, containment: Containment) -> None:
    if not containment.cgroups:
        pytest.skip("no per-run cgroup can be made here")
    cgroup = RunCgroup.create(Limits())
    assert cgroup is not None
    try:
        _, done = session(containment, tmp_path, "cat /proc/self/cgroup", cgroup=cgroup,
                          prepare=lambda: None)  # the cgroup is joined from a thread while `prepare` runs
    finally:
        cgroup.kill()
        cgroup.remove()
    assert done.steps[0].exit_status == 0, done.steps[0].output.text()
    assert cgroup.directories[0].name in done.steps[0].output.text()


@pytest.mark.parametrize("isolated", [False, True])
def test_each_steps_exit_status_or_killing_signal_is_reported(tmp_path: Path, containment: Containment,
                                                              isolated: bool) -> None:
    if isolated:
        namespaces_only(containment)
    used = containment if isolated else Containment(NO_ISOLATION)
    _, done = session(used, tmp_path, "exit 7", "kill -TERM $$", "echo fine")
    assert [(step.stop, step.exit_status) for step in done.steps] == [(FINISHED, 7), (FINISHED, -15), (FINISHED, 0)]
    assert done.steps[2].output.text() == "fine\n"


def test_a_failing_step_that_must_succeed_ends_the_session(tmp_path: Path, containment: Containment) -> None:
    _, done = session(containment, tmp_path, "exit 3", "echo never", stop_on_failure=True)
    assert (done.steps[0].exit_status, done.steps[1].stop) == (3, NOT_RUN)
    assert done.steps[1].output.text() == ""


@pytest.mark.parametrize("isolated", [False, True])
def test_the_launcher_stops_a_step_at_its_own_timeout_and_kills_what_it_started(
        tmp_path: Path, containment: Containment, isolated: bool) -> None:
    if isolated:
        namespaces_only(containment)
    used = containment if isolated else Containment(NO_ISOLATION)
    seconds = f"4322.{secrets.randbelow(10**6)}"
    _, done = session(used, tmp_path, f"sleep {seconds} & echo started; exec sleep {seconds}", "echo next",
                      timeout=1)
    assert done.steps[0].stop == TIMED_OUT and done.steps[0].output.text() == "started\n"
    assert (done.steps[1].stop, done.steps[1].output.text()) == (FINISHED, "next\n")
    assert wait_until_gone(seconds) == []


def test_the_sandboxs_disk_is_capped_in_bytes_and_files(tmp_path: Path, containment: Containment) -> None:
    namespaces_only(containment)
    limits = Limits(disk_bytes=8 * 1024**2, disk_inodes=300)
    _, done = session(containment, tmp_path, "head -c 20000000 /dev/zero > big; echo status $?",
                      "rm -f big; i=0; while [ $i -lt 1000 ]; do true > f$i || break; i=$((i+1)); done; echo made $i",
                      limits=limits)
    wrote, made = done.steps[0].output.text(), done.steps[1].output.text()
    assert "No space left on device" in wrote and wrote.endswith("status 1\n")
    assert "No space left on device" in made and int(made.split()[-1]) < 300


def test_sysv_shared_memory_stays_in_the_session(tmp_path: Path, containment: Containment) -> None:
    """A segment made inside is gone with the session; one made on the host is not visible inside."""
    namespaces_only(containment)
    python = os.path.realpath(sys.executable)
    make = ("import ctypes; libc = ctypes.CDLL(None); "
            "print(libc.shmget(0x5eed, 1 << 20, 0o1000 | 0o666))")
    host_segments_before = Path("/proc/sysvipc/shm").read_text()
    folder = SessionFolder.create(tmp_path, "ipc")
    done = run_session(containment, folder, (sys.base_prefix, str(Path(python).parent)), Limits(),
                       [Step("shm", [python, "-I", "-S", "-c", make], SHELL_ENV, 60),
                        Step("list", ["/bin/cat", "/proc/sysvipc/shm"], SHELL_ENV, 60)])
    assert int(done.steps[0].output.text()) >= 0  # made
    assert "5eed" not in Path("/proc/sysvipc/shm").read_text().lower()
    assert len(Path("/proc/sysvipc/shm").read_text().splitlines()) == len(host_segments_before.splitlines())
    assert len(done.steps[1].output.text().splitlines()) == 2  # the header and its own segment


KILLED_RUNNER = """
import sys
from pathlib import Path
from projectgen.evaluation.sandbox import Limits, RunCgroup
from projectgen.evaluation.sandbox_probe import probe_containment
from projectgen.evaluation.sandbox_session import SessionFolder, Step, run_session

scratch = Path(sys.argv[1])
containment = probe_containment("auto", scratch)
cgroup = RunCgroup.create(Limits()) if containment.cgroups else None
folder = SessionFolder.create(scratch, "killed")
print(folder.root, cgroup.directories[0] if cgroup else "", flush=True)
run_session(containment, folder, (), Limits(),
            [Step("sleep", ["/bin/sh", "-c", "sleep SECONDS & exec sleep SECONDS"], {"PATH": "/usr/bin:/bin"}, 600)],
            cgroup)
"""


def test_a_runner_killed_mid_run_leaves_nothing_running_and_its_leftovers_are_swept(tmp_path: Path) -> None:
    seconds = f"4323.{secrets.randbelow(10**6)}"
    runner = subprocess.Popen([sys.executable, "-c", KILLED_RUNNER.replace("SECONDS", seconds), str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    assert runner.stdout is not None
    folder, cgroup = (runner.stdout.readline().split() + [""])[:2]
    deadline = time.monotonic() + 60
    while len(sleeping(seconds)) < 2 and time.monotonic() < deadline:  # the daemon and the step itself
        time.sleep(0.05)
    assert len(sleeping(seconds)) == 2
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    assert wait_until_gone(seconds) == []  # the launcher and its init die with the runner
    assert Path(folder).exists()
    removed = sweep_leftovers(tmp_path)
    assert folder in removed and not Path(folder).exists()
    if cgroup:  # cgroups are the host's, not tmp_path's: another process's sandbox start may sweep it first
        assert not Path(cgroup).exists()


def sleeping(seconds: str) -> list[str]:
    """Host pids of `sleep SECONDS` processes."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes() == f"sleep\0{seconds}\0".encode():
                found.append(cmdline.parent.name)
        except OSError:
            continue
    return found


def wait_until_gone(seconds: str, patience: float = 10.0) -> list[str]:
    deadline = time.monotonic() + patience
    while sleeping(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sleeping(seconds)


def test_the_deep_tree_a_run_leaves_is_still_removed() -> None:
    """Without namespaces the code under test writes the host's workspace: 3,000 levels and an unwritable
    folder must not stop the clean-up (shutil.rmtree alone raises RecursionError). Made outside pytest's
    tmp_path, whose own clean-up would meet the tree if this test failed."""
    parent = Path(tempfile.mkdtemp(prefix="projectgen-deep-"))
    try:
        python = os.path.realpath(sys.executable)
        deep = ("import os\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\n"
                "os.mkdir('locked'); open('locked/f', 'w').close(); os.chmod('locked', 0o500)")
        folder, done = session(Containment(NO_ISOLATION), parent, f"{python} -I -S -c \"{deep}\"")
        assert done.steps[0].exit_status == 0, done.steps[0].output.text()
        folder.remove()
        assert not folder.root.exists()
    finally:
        remove_tree(parent)


def test_the_host_reads_a_chatty_step_in_batches_and_loses_none_of_it(tmp_path: Path, containment: Containment,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A step that prints a line every millisecond (as the recorder writes an event per test phase) wakes the
    host at most once per QUIET_SECONDS for it, not once a line: every wake-up cost the writer too."""
    reads: list[int] = []
    original = sandbox_session._Pump._read

    def counted(pump, fd: int, source):
        if source not in ("log", "status"):
            reads.append(fd)
        return original(pump, fd, source)

    monkeypatch.setattr(sandbox_session._Pump, "_read", counted)
    started = time.monotonic()
    _, done = session(containment, tmp_path, "i=0; while [ $i -lt 300 ]; do echo line $i; sleep 0.001; i=$((i+1)); done")
    elapsed = time.monotonic() - started
    assert (done.steps[0].stop, done.steps[0].exit_status) == (FINISHED, 0)
    assert done.steps[0].output.total == sum(len(f"line {i}\n") for i in range(300))
    assert len(reads) <= elapsed / QUIET_SECONDS + 3  # eagerly, it was about one read per line


# --------------------------------------------------------------------------- what the steps used

HOARD_MB = 120
HOARD = f"import sys, time; hoard = b'x' * ({HOARD_MB} * 1024 * 1024); open(sys.argv[1], 'w').close(); time.sleep(600)"
# What a test process could try to lower its figures with: fake "ended" lines on every descriptor it has besides
# its output, and on the launcher's (PID 1's, in the namespace) through /proc; a fake measurement file. Prints
# how many of those writes went anywhere.
FORGE = """import glob, os
line = b"ended 0 finished 0 1 1 1\\n"
wrote = 0
for fd in range(3, 256):
    try:
        os.write(fd, line); wrote += 1
    except OSError:
        pass
for path in glob.glob("/proc/1/fd/*"):
    try:
        with open(path, "wb") as target:
            target.write(line); wrote += 1
    except OSError:
        pass
with open("usage.json", "w") as fake:
    fake.write('{"peak_memory_mb": 1, "cpu_seconds": 0}')
print("wrote", wrote)
"""


@pytest.mark.parametrize("isolated", [False, True])
def test_each_step_reports_the_peak_memory_and_cpu_time_its_processes_used(
        tmp_path: Path, containment: Containment, isolated: bool) -> None:
    """The launcher's per-step usage (wait4 rusage, read from the kernel): a step whose child process holds
    HOARD_MB reports at least that much, a lean one far less; as PID 1 of the namespace, an orphan the step
    left holding memory counts too, and what the step writes cannot change the figures."""
    if isolated:
        namespaces_only(containment)
    used = containment if isolated else Containment(NO_ISOLATION)
    python = os.path.realpath(sys.executable)
    hoarder = f"{python} -I -S -c \"{HOARD}\" ready-a & while [ ! -e ready-a ]; do sleep 0.05; done; kill $!; wait"
    orphan = f"{python} -I -S -c \"{HOARD}\" ready-b & while [ ! -e ready-b ]; do sleep 0.05; done; exit 0"
    forge = f"import base64; exec(base64.b64decode('{base64.b64encode(FORGE.encode()).decode()}'))"
    forger = f"{python} -I -S -c \"{forge}\" && {hoarder.replace('ready-a', 'ready-c')}"
    _, done = session(used, tmp_path, "true", hoarder, orphan, forger, timeout=30)
    lean, hoarding, orphaned, forging = (step.usage for step in done.steps)
    assert all(usage is not None for usage in (lean, hoarding, orphaned, forging)), done.steps
    assert lean.peak_rss_kb < 64 * 1024 and hoarding.peak_rss_kb > HOARD_MB * 1024
    assert hoarding.cpu_seconds > 0 and hoarding.wall_seconds > 0
    assert forging.peak_rss_kb > HOARD_MB * 1024
    if isolated:  # without namespaces an orphan is reparented away from the launcher and not reaped by it
        assert orphaned.peak_rss_kb > HOARD_MB * 1024
        assert done.steps[3].output.text().startswith("wrote 0\n")  # no descriptor of the launcher reachable
