"""Where a fetched benchmark's versions live, and how a new one replaces the installed one.

Readers (a run, `datasets list`, the tests) go through ``datasets/NAME``, a symbolic link to one complete
version folder (``datasets/.NAME.versions/ID``, holding fetched.json and the data folder). A fetch builds a
new version beside the others and swaps the link in one rename, so a reader never finds the name missing
or half written; a run that resolved the link keeps its version, which stays on disk for
`KEEP_REPLACED` after it was replaced. Fetches of one benchmark take turns on a lock file.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

# How long a replaced version stays on disk for the runs that started on it.
KEEP_REPLACED = timedelta(days=7)
# Written in a version folder when another version replaces it: its time is when.
REPLACED_MARKER = ".replaced"

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def versions_folder(root: Path) -> Path:
    """The folder of `root`'s versions (datasets/.NAME.versions for datasets/NAME)."""
    return root.with_name(f".{root.name}.versions")


@contextmanager
def install_lock(root: Path, log: Callable[[str], None]) -> Iterator[None]:
    """Hold the lock of `root` (waiting for another fetch of it to end): two fetches at once would each
    compare themselves with the copy the other is about to replace."""
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.with_name(f".{root.name}.lock"), "a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another fetch of {root.name} to finish")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def new_version(root: Path) -> Path:
    """An empty version folder to build a copy in (not installed until `swap_in`)."""
    folder = versions_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%S-", time.gmtime()), dir=folder))


def swap_in(root: Path, version: Path) -> Path | None:
    """Point `root` at `version` in one rename; returns the version folder it replaced (kept: see
    `mark_replaced`), None when there was none."""
    link = root.with_name(f".{root.name}.link-{os.getpid()}-{version.name}")
    link.symlink_to(os.path.relpath(version, root.parent), target_is_directory=True)
    if root.is_symlink() or not root.exists():
        previous = root.resolve() if root.is_symlink() else None
        os.replace(link, root)
    else:  # a copy installed before versions existed: a real folder
        previous = versions_folder(root) / f"unversioned-{os.getpid()}"
        if _exchange(link, root):
            link.rename(previous)
        else:  # no atomic exchange here: a reader may find the name missing for one rename
            root.rename(previous)
            os.replace(link, root)
    return previous if previous is not None and previous.is_dir() and previous != version.resolve() else None


def mark_replaced(version: Path) -> None:
    """Note when `version` stopped being the installed one: `prune_versions` keeps it `KEEP_REPLACED` more."""
    (version / REPLACED_MARKER).touch()


def prune_versions(root: Path, now: float | None = None) -> None:
    """Delete versions replaced more than `KEEP_REPLACED` ago, and folders a fetch that died left (only
    called under the lock, so no other fetch is building one)."""
    folder = versions_folder(root)
    if not folder.is_dir():
        return
    current = root.resolve() if root.is_symlink() else None
    oldest = (time.time() if now is None else now) - KEEP_REPLACED.total_seconds()
    for version in folder.iterdir():
        if version == current or not version.is_dir():
            continue
        marker = version / REPLACED_MARKER
        if not marker.exists() or marker.stat().st_mtime < oldest:
            shutil.rmtree(version, ignore_errors=True)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two names in one step (Linux renameat2 RENAME_EXCHANGE); False where that is not available."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))
