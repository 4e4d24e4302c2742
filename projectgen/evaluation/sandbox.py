"""Wrapping a command so untrusted code runs isolated, limited and killable.

Isolation "namespaces": our launcher gives the session user, mount, network,
PID, IPC and UTS namespaces and a new root of its own (an empty, capped tmpfs
with only the system folders, the test environment and a copy of the workspace;
docs/sandbox.md) and drops capabilities; as root it also runs the code as an
unused host uid (`SANDBOX_UID`), because the kernel exempts host root from the
process limit. When namespaces cannot be created here (some containers forbid
it) the fallback "none" still applies resource limits, a private HOME/TMPDIR,
timeouts and process-group kill, and the runner says once, and every report
says, that the score is not protected.

Where the runner may create cgroups (v2 with pids/memory/cpu delegated to its own
cgroup, or v1 pids/memory/cpu hierarchies), each run also gets one: a cap on the
tasks, the memory and the CPU time of the whole run, and a way to kill all of it.
`probe_containment` finds out once what holds on this machine.
"""
from __future__ import annotations

import importlib.util
import os
import py_compile
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

NAMESPACES = "namespaces"
NO_ISOLATION = "none"
# Host uid/gid that sandboxed code runs as when the runner is root: unused by any
# account, so it owns nothing on the host and shares no process count.
SANDBOX_UID = 1_879_048_192
# `python -I -S -c LAUNCH FOLDER ARGS...`: the launcher as a module, its bytecode cached beside it.
LAUNCH = "import sys; sys.path.insert(0, sys.argv[1]); import launcher; launcher.launch(sys.argv[2:])"
V1_CONTROLLERS = ("pids", "memory", "cpu")  # the v1 hierarchies a run's cgroup is made in (pids first: required)
CPU_PERIOD_US = 100_000  # the CFS period of a run's CPU quota



@dataclass(frozen=True)
class Limits:
    """Per-run resource limits (bytes / counts); None means unlimited.

    `memory_bytes` caps each process's address space and, where cgroups are
    available, the run's memory in total (the sandbox's disk is a tmpfs: its files count too).
    `disk_bytes` and `disk_inodes` cap what the run may write (ENOSPC past them; namespaces only). `processes` caps the tasks (processes
    and threads) of the run. `cpu_cores` caps the CPU time of the whole run per period, where cgroups are
    available (a suite runs in one process: one core does not slow it). `output_bytes` caps what the run may print before
    it is stopped; only the end of the output is kept either way.
    """

    memory_bytes: int | None = 8 * 1024**3
    file_size_bytes: int | None = 512 * 1024**2
    open_files: int | None = 4096
    processes: int | None = 4096  # tasks (processes and threads): exercism's bank-account starts 1,000 threads
    output_bytes: int | None = 128 * 1024**2
    disk_bytes: int = 2 * 1024**3  # the sandbox's whole disk (workspace, temp, home, install prefix), in memory
    disk_inodes: int = 200_000
    cpu_cores: float | None = 1.0  # the run's CPU share (cgroup quota), in cores: a fork bomb gets one, not all


@dataclass(frozen=True)
class Containment:
    """What the sandbox enforces on this machine, found by trying it once."""

    isolation: str
    run_as: int | None = None  # host uid the code runs as; None: the runner's own
    cgroups: bool = False  # a cgroup per run: total tasks and memory, kill-all
    processes_bounded: bool = False  # the probe's fork loop hit the process limit
    notes: tuple[str, ...] = ()  # what is not contained, for a one-time warning


def sandbox_file(name: str) -> Path:
    """Path of a helper file shipped with the package (plugin, launcher), links resolved: the sandbox binds
    it by that path into a root where a link to the host's tree leads nowhere (a package reached through
    a linked folder, as `langgraph dev` serves one)."""
    return Path(str(resources.files("projectgen.evaluation") / "sandbox_files" / name)).resolve()


def compile_recorder(python_version: str) -> None:
    """Write the recorder's (and the bootstrap's) bytecode beside it for an environment on this interpreter's version, if missing
    or older than the source.

    The test process imports `projectgen_results` from the sandbox's read-only folder, so without a
    current `.pyc` there every evaluation compiles it again (about 1 ms); a wheel's install compiles it, an
    editable checkout does not. Another Python version, or a folder we may not write, keeps compiling."""
    if tuple(python_version.split(".")[:2]) != tuple(str(part) for part in sys.version_info[:2]):
        return
    for name in ("projectgen_results.py", "pytest_bootstrap.py"):  # both imported as modules (`runner.BOOTSTRAP`)
        source = sandbox_file(name)
        try:
            if not _bytecode_is_current(source, Path(importlib.util.cache_from_source(str(source)))):
                py_compile.compile(str(source), doraise=True)
        except (OSError, py_compile.PyCompileError):
            pass


def _bytecode_is_current(source: Path, compiled: Path) -> bool:
    """Whether `compiled` is this interpreter's bytecode of `source` as it is now: the check the import system
    makes (magic number, then the source's modification time and size recorded in the header)."""
    try:
        with compiled.open("rb") as file:
            header = file.read(16)
    except OSError:
        return False
    stat = source.stat()
    return (len(header) == 16 and header[:4] == importlib.util.MAGIC_NUMBER and header[4:8] == bytes(4)
            and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def limit_args(limits: Limits) -> list[str]:
    """Launcher arguments that apply the per-process limits to the whole sandboxed tree (no core files)."""
    args = ["--rlimit", "core=0"]
    for name, value in (("as", limits.memory_bytes), ("fsize", limits.file_size_bytes),
                        ("nofile", limits.open_files)):
        if value:
            args += ["--rlimit", f"{name}={value}"]
    return args


class SessionFolderLike(Protocol):
    """What the launcher is told of a session's folder (`sandbox_session.SessionFolder`)."""

    @property
    def workspace(self) -> Path: ...
    @property
    def control(self) -> Path: ...
    @property
    def mountpoint(self) -> Path: ...
    @property
    def private(self) -> tuple[Path, ...]: ...
    @property
    def protect_list(self) -> Path: ...


def sandbox_prefix(containment: Containment, folder: SessionFolderLike, binds: tuple[str, ...], limits: Limits,
                   cgroup: RunCgroup | None, status_fd: int) -> list[str]:
    """The launcher's command line: its steps (control/steps.marshal), the limits and, in namespaces, what its
    new root holds (`binds` read-only, beside the system folders and the sandbox's own files).

    `-S`: the launcher needs no site-packages, and reading the runner's `.pth` files would cost
    every evaluation more than the launcher's own work. `LAUNCH` imports it rather than running
    it as a script, which would be compiled again at every start. Start the result with
    `start_sandboxed` and the same `cgroup`: the launcher waits for its go-ahead on stdin."""
    args = [sys.executable, "-I", "-S", "-c", LAUNCH, str(sandbox_file("launcher.py").parent), *limit_args(limits),
            "--parent", str(os.getpid()), "--workspace", str(folder.workspace),
            "--steps", str(folder.control / "steps.marshal"), "--status-fd", str(status_fd)]
    for tasks in cgroup.self_join_files() if cgroup else []:
        args += ["--join", tasks]
    if containment.isolation == NAMESPACES:
        args += ["--isolate", "--mountpoint", str(folder.mountpoint), "--root-size", str(limits.disk_bytes),
                 "--root-inodes", str(limits.disk_inodes)]
        args += ["--protect", str(folder.protect_list)]  # written while the launcher starts, read after
        if limits.processes:
            args += ["--processes", str(limits.processes)]
        if containment.run_as is not None:
            args += ["--map-uid", str(containment.run_as)]
        for path in (str(sandbox_file("launcher.py").parent), str(folder.control), *binds):
            args += ["--bind", path]
        for private in folder.private:
            args += ["--private", str(private)]
    return args


def start_sandboxed(command: list[str], cgroup: RunCgroup | None, prepare: Callable[[], None] | None = None,
                    **popen: Any) -> subprocess.Popen:
    """Start `sandbox_prefix(..., cgroup) + [command]`: its launcher's interpreter starts while this side
    runs `prepare` (the workspace's files), and it goes on once that is done and it is in the run's cgroup.

    Moving a whole process into a cgroup waits for an RCU grace period (7 to 20 ms here). A
    single-threaded process moving itself through a v1 `tasks` file does not (`RunCgroup.self_join_files`),
    so the launcher does that; a v2 cgroup has no such file, and this side moves the launcher in a
    thread, overlapping with `prepare` and the launcher's start. The launcher starts nothing before
    it reads the go-ahead on its stdin ("1"; anything else, or end of file, and it exits with status
    120 saying so), then replaces its stdin with /dev/null. When `prepare` raises, the launcher is
    killed before it started anything.
    """
    process = subprocess.Popen(command, stdin=subprocess.PIPE, **popen)
    failures: list[OSError] = []

    def move() -> None:
        try:
            if cgroup and not cgroup.self_join_files():
                cgroup.add(process.pid)
        except OSError as exc:
            failures.append(exc)

    mover = threading.Thread(target=move, name="projectgen-cgroup-move") \
        if cgroup and not cgroup.self_join_files() and prepare else None
    try:
        if mover:
            mover.start()
        else:
            move()
        if prepare:
            prepare()
    except BaseException:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream:
                stream.close()
        raise
    finally:
        if mover:
            mover.join()
    assert process.stdin is not None
    try:
        os.write(process.stdin.fileno(), b"0" if failures else b"1")
    except BrokenPipeError:
        pass  # it ended already; its exit status says how
    process.stdin.close()
    process.stdin = None  # as if started without one: `communicate` must not flush it
    return process


# -- cgroups --------------------------------------------------------------------------
def _mounts() -> list[tuple[str, str, set[str]]]:
    """(filesystem type, mount point, options) of every mount we see."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            found.append((parts[2], parts[1], set(parts[3].split(","))))
    return found


def _own_cgroups() -> dict[str, str]:
    """Our cgroup path per v1 controller, and under "" the v2 one."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


@dataclass(frozen=True)
class RunCgroup:
    """The cgroup(s) of one run: bound its tasks and memory in total, and kill all of it."""

    directories: tuple[Path, ...]
    memory: Path | None
    version: int
    cpu: Path | None = None  # where the run's CPU quota is set (None: no cpu controller here)

    @classmethod
    def create(cls, limits: Limits) -> RunCgroup | None:
        """A new cgroup below ours with the limits set, or None where we may not make one."""
        name = f"projectgen-{os.getpid()}-{secrets.token_hex(4)}"
        made = cls._make_v2(name, limits) or cls._make_v1(name, limits)
        if made:
            try:
                made._set_limits(limits)
            except OSError:
                made.remove()
                return None
        return made

    @classmethod
    def _make_v2(cls, name: str, limits: Limits) -> RunCgroup | None:
        mount = next((point for fstype, point, _ in _mounts() if fstype == "cgroup2"), None)
        own = _own_cgroups().get("")
        if mount is None or own is None:
            return None
        parent = Path(mount) / own.lstrip("/")
        try:
            delegated = set((parent / "cgroup.subtree_control").read_text().split())
            if "pids" not in delegated:
                return None  # enabling it would change a cgroup that is not ours
            child = parent / name
            child.mkdir()
        except OSError:
            return None
        return cls((child,), child if "memory" in delegated and limits.memory_bytes else None, 2,
                   child if "cpu" in delegated and limits.cpu_cores else None)

    @classmethod
    def _make_v1(cls, name: str, limits: Limits) -> RunCgroup | None:
        own = _own_cgroups()
        made: dict[str, Path] = {}
        wanted = {"pids": True, "memory": bool(limits.memory_bytes), "cpu": bool(limits.cpu_cores)}
        for controller in V1_CONTROLLERS:
            mount = next((point for fstype, point, options in _mounts()
                          if fstype == "cgroup" and controller in options), None)
            if mount is None or controller not in own or not wanted[controller]:
                continue
            try:
                directory = Path(mount) / own[controller].lstrip("/") / name
                directory.mkdir()
                made[controller] = directory
            except OSError:
                continue
        if "pids" not in made:
            cls(tuple(made.values()), None, 1).remove()
            return None
        return cls(tuple(made.values()), made.get("memory"), 1, made.get("cpu"))

    def _set_limits(self, limits: Limits) -> None:
        pids = self.directories[0]
        if limits.processes:
            (pids / "pids.max").write_text(str(limits.processes))
        if self.memory is not None and limits.memory_bytes:
            if self.version == 2:
                (self.memory / "memory.max").write_text(str(limits.memory_bytes))
                _try_write(self.memory / "memory.swap.max", "0")
            else:
                (self.memory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                _try_write(self.memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        if self.cpu is not None and limits.cpu_cores:
            quota = max(1000, round(limits.cpu_cores * CPU_PERIOD_US))
            if self.version == 2:
                (self.cpu / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            else:
                (self.cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (self.cpu / "cpu.cfs_quota_us").write_text(str(quota))

    def cpu_limit(self) -> float | None:
        """The run's CPU quota in cores, as its cgroup holds it (read back, not what was asked), or None."""
        if self.cpu is None:
            return None
        try:
            if self.version == 2:
                quota, period = (self.cpu / "cpu.max").read_text().split()[:2]
            else:
                quota = (self.cpu / "cpu.cfs_quota_us").read_text().strip()
                period = (self.cpu / "cpu.cfs_period_us").read_text().strip()
            return None if quota in ("max", "-1") else int(quota) / int(period)
        except (OSError, ValueError):
            return None

    def procs_files(self) -> list[str]:
        return [str(directory / "cgroup.procs") for directory in self.directories]

    def add(self, pid: int) -> None:
        """Move a process (and so what it starts afterwards) into the run's cgroups."""
        for procs in self.procs_files():
            Path(procs).write_text(str(pid))

    def self_join_files(self) -> list[str]:
        """v1 `tasks` files: a single-threaded process that writes "0" there moves itself without
        the kernel's global lock (and its RCU grace period); [] for v2, which has none."""
        return [str(directory / "tasks") for directory in self.directories] if self.version == 1 else []

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files():
            try:
                found.update(int(pid) for pid in Path(procs).read_text().split())
            except OSError:
                continue
        return found

    def kill(self, patience: float = 10.0) -> None:
        """SIGKILL everything in the run's cgroups until they are empty (a fork bomb refills them)."""
        deadline = time.monotonic() + patience
        while True:
            if self.version == 2:
                _try_write(self.directories[0] / "cgroup.kill", "1")
            pids = self.pids()
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    continue
            time.sleep(0.02)

    def oom_kills(self) -> int:
        """Processes the kernel killed because the run reached its memory limit."""
        if self.memory is None:
            return 0
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = (self.memory / name).read_text().splitlines()
        except OSError:
            return 0
        counts = dict(line.split()[:2] for line in lines if len(line.split()) >= 2)
        return int(counts.get("oom_kill", 0))

    def remove(self, patience: float = 5.0) -> None:
        """rmdir every directory (retrying while the last killed processes exit)."""
        deadline = time.monotonic() + patience
        for directory in self.directories:
            while True:
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    self.kill(patience=0.5)
                    time.sleep(0.05)


def _try_write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError:
        pass


def cgroup_parents() -> list[Path]:
    """The folders run cgroups are made in (ours, per hierarchy): where leftovers are swept."""
    own = _own_cgroups()
    parents = []
    for fstype, point, options in _mounts():
        if fstype == "cgroup2" and "" in own:
            parents.append(Path(point) / own[""].lstrip("/"))
        elif fstype == "cgroup":
            for controller in V1_CONTROLLERS:
                if controller in options and controller in own:
                    parents.append(Path(point) / own[controller].lstrip("/"))
    return parents
