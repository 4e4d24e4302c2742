"""Starting a sandboxed command: nothing runs before the runner's go-ahead (its cgroup joined, its workspace
filled), and a start that cannot be completed runs nothing at all."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from projectgen.evaluation.sandbox import (
    NAMESPACES,
    NO_ISOLATION,
    Containment,
    Limits,
    Paths,
    RunCgroup,
    probe_containment,
    sandbox_prefix,
    start_sandboxed,
)


@pytest.fixture(scope="module")
def containment() -> Containment:
    with tempfile.TemporaryDirectory(prefix="projectgen-probe-") as scratch:
        return probe_containment("auto", Path(scratch))


def start(containment: Containment, workspace: Path, command: list[str], cgroup: RunCgroup | None = None,
          prepare=None) -> subprocess.Popen:
    paths = Paths(workspace, keep=(sys.base_prefix, str(Path(os.path.realpath(sys.executable)).parent)))
    return start_sandboxed(sandbox_prefix(containment, paths, Limits(), cgroup) + command, cgroup, prepare,
                           cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.parametrize(("version", "reason"), [(1, "set-up failed"),  # the launcher joins (tasks file)
                                                 (2, "could not move the run into its cgroup")])  # the runner
def test_a_run_that_cannot_join_its_cgroup_never_starts(tmp_path: Path, version: int, reason: str) -> None:
    unwritable = RunCgroup((tmp_path / "no-such-cgroup",), None, version)  # its files cannot be written
    process = start(Containment(NO_ISOLATION), tmp_path, ["/bin/sh", "-c", "touch ran"], unwritable,
                    prepare=lambda: None)
    output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 120
    assert reason in output
    assert not (tmp_path / "ran").exists()


def test_the_workspace_is_prepared_before_the_command_starts(tmp_path: Path, containment: Containment) -> None:
    def prepare() -> None:
        (tmp_path / "prepared.txt").write_text("filled while the launcher started\n")
        tmp_path.chmod(0o755)  # as root the command runs as another uid

    process = start(containment, tmp_path, ["/bin/sh", "-c", "cat prepared.txt"], prepare=prepare)
    assert process.communicate(timeout=60)[0].decode() == "filled while the launcher started\n"
    assert process.returncode == 0


def test_a_failed_preparation_kills_the_launcher_before_anything_ran(tmp_path: Path,
                                                                    containment: Containment) -> None:
    def prepare() -> None:
        raise RuntimeError("the candidate folder vanished")

    with pytest.raises(RuntimeError, match="vanished"):
        start(containment, tmp_path, ["/bin/sh", "-c", "touch ran"], prepare=prepare)
    assert not (tmp_path / "ran").exists()


def test_the_command_runs_inside_the_runs_cgroup(tmp_path: Path, containment: Containment) -> None:
    if not containment.cgroups:
        pytest.skip("no per-run cgroup can be made here")
    cgroup = RunCgroup.create(Limits())
    assert cgroup is not None
    try:
        process = start(containment, tmp_path, ["/bin/cat", "/proc/self/cgroup"], cgroup,
                        prepare=lambda: None)  # the cgroup is joined from a thread while `prepare` runs
        output = process.communicate(timeout=60)[0].decode()
    finally:
        cgroup.kill()
        cgroup.remove()
    assert process.returncode == 0, output
    assert cgroup.directories[0].name in output


def test_without_isolation_the_exit_status_and_a_killing_signal_are_passed_on(tmp_path: Path) -> None:
    exited = start(Containment(NO_ISOLATION), tmp_path, ["/bin/sh", "-c", "exit 7"])
    killed = start(Containment(NO_ISOLATION), tmp_path, ["/bin/sh", "-c", "kill -TERM $$"])
    assert exited.wait(timeout=60) == 7
    assert killed.wait(timeout=60) == -15


def test_in_namespaces_the_exit_status_is_passed_on_and_the_run_dies_with_its_launcher(
        tmp_path: Path, containment: Containment) -> None:
    if containment.isolation != NAMESPACES:
        pytest.skip("namespaces are not available here")
    exited = start(containment, tmp_path, ["/bin/sh", "-c", "exit 7"])
    assert exited.wait(timeout=60) == 7
    seconds = f"4321.{secrets.randbelow(10**6)}"  # this run's sleeper, not another run's
    sleeper = start(containment, tmp_path, ["/bin/sh", "-c", f"echo started; exec sleep {seconds}"])
    assert sleeper.stdout is not None and sleeper.stdout.readline() == b"started\n"
    sleeper.kill()  # the launcher alone, not its process group: PID 1 of the namespace must die with it
    sleeper.wait(timeout=60)
    deadline = time.monotonic() + 10
    while sleeping(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleeping(seconds) == []


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
