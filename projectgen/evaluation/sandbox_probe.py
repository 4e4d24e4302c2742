"""Finding out once what the sandbox enforces on this machine, by trying it.

Namespaces with a separate uid, else namespaces as ourselves, else none; a cgroup per run
or not; and whether a fork loop is stopped by the process limit. The probes run real
sessions (`sandbox_session.run_session`), so what they find is what a run gets.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from projectgen.evaluation.sandbox import NAMESPACES, NO_ISOLATION, SANDBOX_UID, Containment, Limits, RunCgroup
from projectgen.evaluation.sandbox_session import FINISHED, SessionFolder, Step, run_session

PROBE_PROCESSES = 8
PROBE_TIMEOUT = 60.0

FORK_PROBE = """
import os, signal, time
kids = []
try:
    for _ in range(32):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
    print("unbounded")
except OSError:
    print("bounded")
finally:
    for pid in kids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
"""


def _probe(containment: Containment, scratch: Path, argv: list[str], limits: Limits,
           cgroup: RunCgroup | None = None) -> tuple[bool, str]:
    """(whether `argv` ran and exited 0, its output or why it did not run) in a real session."""
    folder = SessionFolder.create(scratch, "probe")
    python = os.path.realpath(sys.executable)
    binds = (sys.base_prefix, str(Path(python).parent))
    try:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder.home), "LANG": "C.UTF-8"}
        done = run_session(containment, folder, binds, limits, [Step("probe", argv, env, PROBE_TIMEOUT)], cgroup)
    except OSError as exc:
        return False, f"failed to start: {exc}"
    finally:
        folder.remove()
    step = done.steps[0]
    if done.setup_error:
        return False, done.setup_error
    if step.stop != FINISHED or step.exit_status != 0:
        lines = step.output.text().strip().splitlines()
        return False, lines[-1] if lines else f"{step.stop} (exit status {step.exit_status})"
    return True, step.output.text()


def probe_namespaces(scratch: Path) -> Containment:
    """Namespaces with the separate uid, else namespaces as ourselves, else none (with why)."""
    if not shutil.which("setpriv"):  # the launcher makes namespaces and mounts itself; setpriv drops privileges
        return Containment(NO_ISOLATION, notes=("setpriv not found",))
    scratch.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    for run_as in ([SANDBOX_UID, None] if os.geteuid() == 0 else [None]):
        worked, said = _probe(Containment(NAMESPACES, run_as=run_as), scratch, ["true"], Limits())
        if worked:
            return Containment(NAMESPACES, run_as=run_as, notes=tuple(notes))
        failure = f"namespace sandbox unavailable: {said}"
        notes.append(failure if run_as is None else f"cannot run as a separate uid ({failure})")
    return Containment(NO_ISOLATION, notes=(notes[-1],))


def processes_are_bounded(containment: Containment, scratch: Path) -> bool:
    """Run a fork loop of 32 under a limit of PROBE_PROCESSES: does the limit stop it?"""
    limits = Limits(processes=PROBE_PROCESSES)
    cgroup = RunCgroup.create(limits) if containment.cgroups else None
    if containment.isolation != NAMESPACES and cgroup is None:
        return False  # nothing to run: root ignores RLIMIT_NPROC, and we do not set it without namespaces
    try:
        worked, said = _probe(containment, scratch, [os.path.realpath(sys.executable), "-I", "-S", "-c", FORK_PROBE],
                              limits, cgroup)
    finally:
        if cgroup:
            cgroup.kill()
            cgroup.remove()
    return worked and "bounded" in said.split()


def probe_containment(wanted: str, scratch: Path) -> Containment:
    """What holds here: isolation level, separate uid, cgroups, and whether fork loops are bounded.

    Its notes say what is not contained; with namespaces wanted but unavailable
    the first note gives the reason.
    """
    level = probe_namespaces(scratch) if wanted != NO_ISOLATION else Containment(NO_ISOLATION)
    notes = []
    if level.isolation != NAMESPACES and wanted != NO_ISOLATION:
        notes.append(f"tests run WITHOUT isolation: scores are not protected from the code under test "
                     f"({level.notes[-1]})")
    elif level.notes:
        notes.append(f"sandboxed code runs as the runner's own uid inside its namespaces ({level.notes[0]})")
    probe_cgroup = RunCgroup.create(Limits(processes=PROBE_PROCESSES))
    if probe_cgroup:
        probe_cgroup.remove()
        if probe_cgroup.cpu is None:
            notes.append("no cpu controller for the per-run cgroups: a run may use every core (a fork bomb "
                         "holds the machine until its timeout)")
    else:
        notes.append("no per-run cgroup: memory is bounded per process, not per run, and a run may use every core")
    found = Containment(level.isolation, level.run_as, probe_cgroup is not None)
    bounded = processes_are_bounded(found, scratch)
    if not bounded:
        notes.append("the number of processes is not bounded here (a fork bomb is stopped only by the timeout)")
    return Containment(found.isolation, found.run_as, found.cgroups, bounded, tuple(notes))
