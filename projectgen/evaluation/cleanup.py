"""Removing what sandboxed runs leave on the host, whatever shape it is in.

A folder the code under test wrote (without namespaces it writes the host's workspace) may be
thousands of folders deep, hold unwritable folders or millions of files: `shutil.rmtree` recurses
(RecursionError past ~1,000 levels) and stops at a folder it may not change. `remove_tree` falls
back to coreutils' `chmod -R` and `rm -rf`, which walk any depth. `sweep_leftovers` removes the
session folders and cgroups of runners that died (SIGKILL, a crash) before they could clean up:
their names carry the runner's pid.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from projectgen.evaluation.sandbox import RunCgroup, cgroup_parents

SESSION_FOLDER = re.compile(r"^projectgen-ws-(\d+)-")
RUN_CGROUP = re.compile(r"^projectgen-(\d+)-[0-9a-f]+$")


def remove_tree(path: Path) -> None:
    """Remove `path` and everything below it; never raises for what is below."""
    if not os.path.lexists(path):
        return
    try:
        shutil.rmtree(path)
        return
    except (OSError, RecursionError):
        pass
    for command in (["chmod", "-R", "u+rwx", "--", str(path)], ["rm", "-rf", "--one-file-system", "--", str(path)]):
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                       check=False)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_leftovers(workdir: Path | None) -> list[str]:
    """Remove the session folders (in `workdir`, else the system temp folder) and the run cgroups of
    runners that are no longer alive; what was removed, for a log line."""
    removed: list[str] = []
    parent = Path(workdir) if workdir else Path(tempfile.gettempdir())
    try:
        entries = list(os.scandir(parent))
    except OSError:
        entries = []
    for entry in entries:
        match = SESSION_FOLDER.match(entry.name)
        if match and not process_alive(int(match.group(1))):
            remove_tree(Path(entry.path))
            removed.append(entry.path)
    for cgroups in cgroup_parents():
        try:
            children = list(os.scandir(cgroups))
        except OSError:
            continue
        for entry in children:
            match = RUN_CGROUP.match(entry.name)
            if match and entry.is_dir() and not process_alive(int(match.group(1))):
                RunCgroup((Path(entry.path),), None, 2 if (Path(entry.path) / "cgroup.kill").exists() else 1).remove()
                removed.append(entry.path)
    return removed
