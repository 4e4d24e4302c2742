"""A unit's folder kept in step between a worker's machine and the driver's, with no shared filesystem.

A worker that does not see the driver's files runs a unit in a folder of its own machine
(`projectgen.experiments.engine.Relocatable`). `FolderCopy` is the driver's side: it lives on the
driver's machine (a Ray actor pinned to the driver's node) and writes the driver's copy of each
unit's folder. `Mirror` is the worker's side: it starts from the driver's copy (`FolderCopy.claim`,
so a unit retried on another machine resumes from what the dead worker had sent) and sends what
changed (`Mirror.flush`): appended lines of the JSONL logs as tails, any other changed file whole,
deleted files as deletions. The unit's run calls `flush` after each model call is recorded and
before each checkpoint is written, so the driver's copy holds every completed call and is never
behind the checkpoint; a background thread flushes every few seconds too (so `projectgen trace`
on the driver follows a run on another machine), and the last flush, with everything, ends the
unit before its row goes back.

While the unit runs, files of stores that are only consistent when closed (SQLite checkpoints,
an embedded Chroma store) are not sent: a command whose units may land on another machine keeps
them in PostgreSQL and a Chroma server instead (the CLI refuses otherwise). Lock files are never
sent. One worker owns a folder at a time: `claim` gives a token, and a worker whose token is no
longer the newest (Ray retried its unit elsewhere while it was cut off) can no longer write.
"""
from __future__ import annotations

import io
import os
import shutil
import tarfile
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from projectgen.durable_files import write_atomic_bytes
from projectgen.repository import safe_relpath

APPENDED_SUFFIX = ".jsonl"  # files only ever appended to: sent as tails
LIVE_STORES = ("checkpoints.sqlite", "knowledge")  # consistent only when closed: sent by the last flush
FLUSH_EVERY_S = 2.0


@dataclass(frozen=True)
class Change:
    """One file's new bytes: the whole file (`offset` None) or what was appended from `offset` on."""

    path: str  # relative to the workspace; "" when the workspace is a file
    data: bytes
    offset: int | None = None


class StaleClaim(Exception):
    """A worker wrote to a folder that a newer try of its unit has claimed since."""


def skipped(relative: str) -> bool:
    """Lock files (held by whoever works in a folder, never part of its content) and the temp files of
    atomic writes (renamed over their target a moment later)."""
    name = relative.rsplit("/", 1)[-1]
    return name.endswith(".lock") or ".tmp-" in name


def live(relative: str) -> bool:
    """Files of a store that is consistent only when closed (sent by the last flush only)."""
    first = relative.split("/", 1)[0]
    return any(first == name or first.startswith(name + "-") for name in LIVE_STORES)


def pack(path: Path) -> bytes | None:
    """A folder (or file) as a gzipped tar, lock files left out; None when it does not exist."""
    if not path.exists():
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        if path.is_file():
            tar.add(path, arcname=".")
        else:
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                relative = file.relative_to(path).as_posix()
                if not skipped(relative):
                    tar.add(file, arcname=relative)
    return buffer.getvalue()


def unpack(data: bytes | None, path: Path, *, is_file: bool) -> None:
    """Write what `pack` made at `path` (nothing when it was None)."""
    if data is None:
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        if is_file:
            member = tar.extractfile(tar.getmember("."))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(member.read() if member else b"")
        else:
            path.mkdir(parents=True, exist_ok=True)
            for member in tar.getmembers():
                if member.isfile():  # `pack` writes regular files only; nothing else is made here
                    _extract_file(tar, member, path)


def _extract_file(tar: tarfile.TarFile, member: tarfile.TarInfo, root: Path) -> None:
    """One regular file of `tar` below `root`, at a path that stays inside it, with its mode bits (no set-id,
    no write for others) and time. By hand, not `extractall(filter="data")`: the filter is missing before
    Python 3.10.12 and 3.11.4 (Debian 12's python3 is 3.11.2)."""
    target = root / safe_relpath(member.name)
    source = tar.extractfile(member)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read() if source else b"")
    target.chmod((member.mode & 0o755) | 0o600)
    os.utime(target, (member.mtime, member.mtime))


class FolderCopy:
    """The driver's side: writes the driver's copy of the unit folders it was made for, one claimant each."""

    def __init__(self, workspaces: Iterable[str]) -> None:
        self.workspaces = set(workspaces)
        self.claims: dict[str, str] = {}

    def claim(self, workspace: str) -> tuple[str, bytes | None]:
        """Become the one writer of `workspace`: a token for `apply`, and the folder as it is now."""
        self.check(workspace)
        token = uuid.uuid4().hex
        self.claims[workspace] = token
        return token, pack(Path(workspace))

    def apply(self, workspace: str, token: str, changes: list[Change], removed: list[str]) -> None:
        """Write `changes` and delete `removed` in the driver's copy of `workspace`."""
        self.check(workspace)
        if self.claims.get(workspace) != token:
            raise StaleClaim(f"{workspace} was claimed by a newer try of its unit")
        root = Path(workspace)
        for change in changes:
            target = self.target(root, change.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            if change.offset is None:
                write_atomic_bytes(target, change.data)
            else:
                fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    os.ftruncate(fd, change.offset)
                    os.pwrite(fd, change.data, change.offset)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        for relative in removed:
            target = self.target(root, relative)
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
            parent = target.parent
            while parent != root and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent

    def check(self, workspace: str) -> None:
        if workspace not in self.workspaces:
            raise ValueError(f"{workspace} is not a folder of this batch")

    @staticmethod
    def target(root: Path, relative: str) -> Path:
        if not relative:
            return root
        target = root / relative
        if ".." in Path(relative).parts or Path(relative).is_absolute():
            raise ValueError(f"unsafe path {relative!r}")
        return target


@dataclass
class Mirror:
    """The worker's side: sends what changed in `local` since the last flush through `send(changes, removed)`."""

    local: Path
    send: Callable[[list[Change], list[str]], None]
    is_file: bool = False
    sent: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # path -> (size, mtime_ns, inode)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def baseline(self) -> None:
        """What is there now is what the driver has (the claimed copy was just unpacked here)."""
        with self.lock:
            self.sent = {relative: signature(path) for relative, path in self.files()}

    def flush(self, final: bool = False) -> None:
        """Send what changed; `final` also sends the stores that are consistent only when closed. What was
        sent is remembered only once `send` returned: a failed send is sent again by the next flush."""
        with self.lock:
            changes, signatures, present = [], {}, set()
            for relative, path in self.files():
                present.add(relative)
                if live(relative) and not final:
                    continue
                found = self.change(relative, path)
                if found is not None:
                    changes.append(found[0])
                    signatures[relative] = found[1]
            removed = sorted(relative for relative in self.sent if relative not in present)
            if changes or removed:
                self.send(changes, removed)
            self.sent.update(signatures)
            for relative in removed:
                self.sent.pop(relative, None)

    def change(self, relative: str, path: Path) -> tuple[Change, tuple[int, int, int]] | None:
        """The file's change since it was last sent, and its signature once sent; None when unchanged."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # gone since the listing: a deletion for the next flush
            return None
        try:
            stat = os.fstat(fd)
            now = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
            before = self.sent.get(relative)
            if before == now:
                return None
            if (before is not None and relative.endswith(APPENDED_SUFFIX) and before[2] == now[2]
                    and before[0] <= now[0]):
                change = Change(relative, os.pread(fd, now[0] - before[0], before[0]), offset=before[0])
            else:
                change = Change(relative, os.pread(fd, now[0], 0))
            return change, ((change.offset or 0) + len(change.data), now[1], now[2])
        finally:
            os.close(fd)

    def files(self) -> list[tuple[str, Path]]:
        """(relative path, path) of every file but lock files; "" for the workspace when it is a file."""
        if self.is_file:
            return [("", self.local)] if self.local.is_file() else []
        if not self.local.is_dir():
            return []
        found = []
        for folder, _, names in os.walk(self.local):
            for name in names:
                path = Path(folder) / name
                relative = path.relative_to(self.local).as_posix()
                if not skipped(relative):
                    found.append((relative, path))
        return sorted(found)


def signature(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


@dataclass
class Ticker:
    """Calls `flush` every `every` seconds on a daemon thread until `stop()`; a flush that fails is left
    to the next one (the last flush, which the unit's end makes itself, reports its error)."""

    flush: Callable[[], None]
    every: float = FLUSH_EVERY_S
    stopped: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Ticker:
        threading.Thread(target=self.loop, name="projectgen-mirror", daemon=True).start()
        return self

    def loop(self) -> None:
        while not self.stopped.wait(self.every):
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - the next flush tries again; the last one raises
                continue

    def stop(self) -> None:
        self.stopped.set()
