"""One process at a time in a run or experiment folder.

A run folder holds an embedded Chroma store (not safe for two processes: Chroma's own advice is a
server for shared use), a SQLite checkpoint database and append-only logs, and an experiment folder
plans its pairs from its ledger; two processes working in one folder at once (a ``--resume`` of a
run that is still going, the same experiment started twice) would corrupt them. `folder_lock` holds
an exclusive ``flock`` on ``FOLDER/.projectgen.lock`` while the work runs and refuses a second
holder with one line naming the first's pid. The kernel drops the lock when its process dies, a
SIGKILL included, so a killed run never leaves a stale lock behind.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from projectgen.errors import ProjectGenError
from projectgen.runs import layout


def lock_holder(folder: Path | str) -> int | None:
    """The pid of the live process holding `folder`'s lock (-1 when it did not write one), or None
    when no process holds it: a run whose run.json still says "running" then died without finishing.

    Probing takes a shared lock for an instant and releases it; nothing is created or written.
    """
    try:
        fd = os.open(Path(folder) / layout.LOCK, os.O_RDONLY)
    except OSError:
        return None  # never locked (or unreadable): no live holder we can know of
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def last_holder(folder: Path | str) -> int | None:
    """The pid the last holder of `folder`'s lock wrote (it may be long gone), if any."""
    try:
        text = (Path(folder) / layout.LOCK).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def folder_lock(folder: Path | str, what: str = "run") -> Iterator[None]:
    """Hold `folder`'s lock (the folder is created when missing); raise `ProjectGenError` when another
    process (or another open in this one) holds it."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / layout.LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ProjectGenError(f"{folder}: cannot write there ({exc.strerror or exc}); choose another --out") \
            from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise ProjectGenError(f"{folder} is in use by another {what} (pid {holder}); wait for it to end "
                                  "or stop it first") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
