"""The version of a checkout system: the git commit its checkout is at.

Why: a checkout system has no installed distribution whose version run.json could record, and two
checkouts of one repository may differ; the commit (with ``+dirty`` when tracked files differ from it)
says which code ran. A folder that is no git checkout (an unpacked archive) has no version: None, which
run.json shows as such rather than a guess.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 30.0


def checkout_version(path: Path) -> str | None:
    """The commit `path` is checked out at, ``+dirty`` appended when a tracked file differs; None when `path` is no
    git checkout (or git is not installed)."""
    commit = _git(path, "rev-parse", "--verify", "HEAD")
    if commit is None:
        return None
    changed = _git(path, "status", "--porcelain", "--untracked-files=no")
    return commit + ("+dirty" if changed else "")


def _git(path: Path, *arguments: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(path), *arguments], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
