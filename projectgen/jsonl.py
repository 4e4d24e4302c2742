"""Appending to the JSONL files of a run (usage, trace, call cache, ledgers) so that a kill never spoils them.

`append_line` writes one whole line with a single ``write`` under an exclusive ``flock`` (writers in
other threads and processes never interleave), and first cuts off a torn last line, the remains of a
writer killed in the middle of its line, so that the new line does not get glued to it and every
line of the file stays a JSON document. Readers still skip a line that does not parse.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

_BLOCK = 1 << 16


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
