"""Writing the files of a run (usage, trace, call cache, ledgers, manifests, summaries) so that a kill never
spoils them.

`append_line` writes one whole line with a single ``write`` under an exclusive ``flock`` (writers in
other threads and processes never interleave), and first cuts off a torn last line, the remains of a
writer killed in the middle of its line, so that the new line does not get glued to it and every
line of the file stays a JSON document. Readers still skip a line that does not parse.

`write_atomic` replaces a whole file: the text goes to a uniquely named temp file beside it, is
fsynced and renamed over the target, so a kill leaves the old file or the new one, never a part; and
that temp file, which `remove_interrupted_writes` takes away when the folder is next held.
"""
from __future__ import annotations

import fcntl
import os
import re
import uuid
from collections.abc import Collection
from pathlib import Path

_BLOCK = 1 << 16
_TEMP_NAME = re.compile(r".\.tmp-[0-9a-f]{8}$")  # `write_atomic`'s temp files: `NAME.tmp-` and 8 hex digits


def append_line(path: Path | str, line: str, *, fsync: bool = False) -> None:
    """Append `line` (a newline is added when missing) to `path`, created with its folder when missing.

    `fsync` makes the line durable before returning (for records others are ordered after).
    """
    path = Path(path)
    data = (line if line.endswith("\n") else line + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            os.ftruncate(fd, _whole_lines_end(fd, size))
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)  # also releases the lock


def _whole_lines_end(fd: int, size: int) -> int:
    """The offset just after the last newline before `size` (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - _BLOCK)
        block = os.pread(fd, end - start, start)
        cut = block.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        end = start
    return 0


def write_synced(path: Path, text: str) -> None:
    """Write `path` (its folder made when missing) and fsync it before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def write_atomic(path: Path | str, text: str) -> None:
    """Replace `path` by `text` in one step (see the module's docstring); concurrent writers never share a temp file."""
    write_atomic_bytes(path, text.encode("utf-8"))


def write_atomic_bytes(path: Path | str, data: bytes) -> None:
    """`write_atomic` for bytes (a file copied from another machine as it was)."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        tmp.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


def remove_interrupted_writes(folder: Path | str, skipped: Collection[str] = ()) -> list[Path]:
    """Remove the temp files `write_atomic` left below `folder` when a kill came before its rename (their
    targets hold the old text or none), but in folders named in `skipped` (generated repositories, whose
    files are the model's to name); the files removed. Only for a folder no other writer is in: one held
    under its lock, before anything is written."""
    removed = []
    for parent, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if name not in skipped]
        for name in files:
            path = Path(parent, name)
            if is_interrupted_write(path):
                path.unlink(missing_ok=True)
                removed.append(path)
    return sorted(removed)


def is_interrupted_write(path: Path) -> bool:
    """Whether `path` is a temp file of `write_atomic` (`NAME.tmp-` and 8 hex digits), not a link."""
    return _TEMP_NAME.search(path.name) is not None and path.is_file() and not path.is_symlink()


def fsync_folder(path: Path) -> None:
    """Make a rename or new file in `path` durable (where folders can be opened at all)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows: folders cannot be opened; rename is still atomic there
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
