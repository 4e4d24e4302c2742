"""Wrapping a command so untrusted code runs isolated, limited and killable.

Isolation "namespaces": `unshare` gives the process a user, mount, network and
PID namespace; our launcher then makes the filesystem read-only outside the
workspace, hides home folders and drops capabilities. When `unshare` cannot
create namespaces here (some containers forbid it) the fallback "none" still
applies resource limits, a private HOME/TMPDIR and process-group kill, and the
runner says once that network and filesystem are not isolated.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

NAMESPACES = "namespaces"
NO_ISOLATION = "none"


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits (bytes / counts); None means unlimited."""

    memory_bytes: int | None = 8 * 1024**3
    file_size_bytes: int | None = 512 * 1024**2
    open_files: int | None = 4096


def sandbox_file(name: str) -> Path:
    """Path of a helper file shipped with the package (plugin, launcher)."""
    return Path(str(resources.files("projectgen.evaluation") / "sandbox_files" / name))


def limit_prefix(limits: Limits) -> list[str]:
    """`prlimit` arguments that apply the limits to the whole sandboxed tree."""
    if not shutil.which("prlimit"):
        return []
    args = ["prlimit", "--core=0"]
    if limits.memory_bytes:
        args.append(f"--as={limits.memory_bytes}")
    if limits.file_size_bytes:
        args.append(f"--fsize={limits.file_size_bytes}")
    if limits.open_files:
        args.append(f"--nofile={limits.open_files}")
    return args + ["--"]


def namespace_prefix(workspace: Path, hide: list[str], keep: list[str], scratch: list[str] | None = None) -> list[str]:
    """`unshare` + launcher arguments that isolate the command."""
    launcher = [sys.executable, "-I", str(sandbox_file("launcher.py")), "--workspace", str(workspace)]
    for path in hide:
        launcher += ["--hide", path]
    for path in scratch or []:
        launcher += ["--scratch", path]
    for path in keep:
        launcher += ["--keep", path]
    unshare = [
        "unshare", "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork",
        "--kill-child", "--mount-proc", "--propagation", "private",
    ]
    return unshare + launcher + ["--"]


def probe_isolation(scratch: Path) -> tuple[str, str]:
    """Try the namespace sandbox once on a trivial command; return (level, reason if degraded)."""
    if not (shutil.which("unshare") and shutil.which("setpriv") and shutil.which("mount")):
        return NO_ISOLATION, "unshare/setpriv/mount not found"
    scratch.mkdir(parents=True, exist_ok=True)
    command = namespace_prefix(scratch, [], []) + ["true"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return NO_ISOLATION, f"namespace sandbox failed to start: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        return NO_ISOLATION, f"namespace sandbox unavailable: {detail[-1] if detail else done.returncode}"
    return NAMESPACES, ""


def default_hidden_paths() -> list[str]:
    """Folders whose secrets (SSH keys, cloud credentials) tests must not read."""
    homes = {os.path.expanduser("~"), "/root", "/home"}
    return sorted(h for h in homes if h and h != "/")


def default_scratch_paths() -> list[str]:
    """Shared temp folders: each sandbox gets its own empty, writable copy."""
    return [p for p in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(p)]
