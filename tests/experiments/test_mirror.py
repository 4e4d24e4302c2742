"""A unit's folder mirrored from a worker's machine to the driver's: the two sides talk through plain calls here."""
from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from projectgen.durable_files import append_line
from projectgen.errors import ProjectGenError
from projectgen.experiments.mirror import FolderCopy, Mirror, StaleClaim, pack, unpack


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_driver_copy_follows_the_worker_folder(tmp_path: Path) -> None:
    driver, worker = tmp_path / "driver" / "unit", tmp_path / "worker" / "unit"
    (driver / "attempts" / "1").mkdir(parents=True)
    (driver / "run.json").write_text('{"run_id": "a"}')
    (driver / "attempts" / "1" / "attempt.json").write_text("{}")
    (driver / ".projectgen.lock").write_text("")
    copy = FolderCopy([str(driver)])
    token, snapshot = copy.claim(str(driver))
    unpack(snapshot, worker, is_file=False)
    assert files(worker) == {"attempts/1/attempt.json": b"{}", "run.json": b'{"run_id": "a"}'}  # no lock file
    sent: list[tuple[list, list]] = []

    def send(changes, removed) -> None:
        sent.append((changes, removed))
        copy.apply(str(driver), token, changes, removed)

    mirror = Mirror(worker, send)
    mirror.baseline()
    mirror.flush()
    assert sent == []  # nothing changed since the claim

    append_line(worker / "calls.jsonl", '{"key": 1}')
    mirror.flush()
    append_line(worker / "calls.jsonl", '{"key": 2}')
    (worker / "run.json").write_text('{"run_id": "a", "status": "finished"}')
    (worker / "checkpoints.sqlite").write_bytes(b"sqlite")  # a live store: only the last flush sends it
    (worker / "knowledge").mkdir()
    (worker / "knowledge" / "chroma.sqlite3").write_bytes(b"chroma")
    (worker / "attempts" / "1" / "attempt.json").unlink()
    (worker / "best" / "t").mkdir(parents=True)
    (worker / "best" / "t" / ".lock").write_text("")
    mirror.flush()
    changes, removed = sent[-1]
    tail = next(c for c in changes if c.path == "calls.jsonl")
    assert (tail.offset, tail.data) == (len(b'{"key": 1}\n'), b'{"key": 2}\n')  # only the appended line
    assert removed == ["attempts/1/attempt.json"]
    assert "checkpoints.sqlite" not in files(driver) and not (driver / "attempts").exists()
    assert files(driver)["calls.jsonl"] == b'{"key": 1}\n{"key": 2}\n'

    mirror.flush(final=True)
    worker_files = {k: v for k, v in files(worker).items() if not k.endswith(".lock")}  # lock files are not sent
    assert files(driver) == {**worker_files, ".projectgen.lock": b""}  # and the driver's stay
    assert worker_files["knowledge/chroma.sqlite3"] == b"chroma"

    newer, _ = copy.claim(str(driver))  # the unit retried elsewhere: the first worker may no longer write
    (worker / "late.txt").write_text("late")
    with pytest.raises(StaleClaim):
        mirror.flush()
    assert newer != token and not (driver / "late.txt").exists()
    with pytest.raises(ValueError, match="not a folder of this batch"):
        copy.claim(str(tmp_path / "elsewhere"))


def test_a_workspace_that_is_one_file(tmp_path: Path) -> None:
    driver, worker = tmp_path / "reports" / "t.unit.json", tmp_path / "w" / "report.json"
    copy = FolderCopy([str(driver)])
    token, snapshot = copy.claim(str(driver))
    assert snapshot is None
    unpack(snapshot, worker, is_file=True)
    mirror = Mirror(worker, lambda changes, removed: copy.apply(str(driver), token, changes, removed), is_file=True)
    mirror.baseline()
    worker.parent.mkdir(parents=True)
    worker.write_text('{"passed": 3}')
    mirror.flush(final=True)
    assert driver.read_text() == '{"passed": 3}'
    unpack(pack(driver), tmp_path / "again.json", is_file=True)
    assert (tmp_path / "again.json").read_text() == '{"passed": 3}'


def test_a_failed_send_is_sent_again_by_the_next_flush(tmp_path: Path) -> None:
    worker, received, failing = tmp_path / "w", [], [True]
    worker.mkdir()

    def send(changes, removed) -> None:
        if failing.pop() if failing else False:
            raise ConnectionError("the driver's actor is busy")
        received.extend((c.path, c.offset, c.data) for c in changes)

    mirror = Mirror(worker, send)
    append_line(worker / "usage.jsonl", "one")
    with pytest.raises(ConnectionError):
        mirror.flush()
    append_line(worker / "usage.jsonl", "two")
    mirror.flush()
    assert received == [("usage.jsonl", None, b"one\ntwo\n")]  # nothing was taken as sent before it was


def test_unpack_writes_regular_files_inside_the_folder_only(tmp_path: Path) -> None:
    """What arrives from another machine is unpacked by hand (any Python 3.10/3.11 patch release): files keep
    their bits and time; a link is not made and a path out of the folder is refused."""
    source = tmp_path / "source"
    (source / "bin").mkdir(parents=True)
    (source / "bin" / "run.sh").write_text("echo hi\n")
    (source / "bin" / "run.sh").chmod(0o755)
    os.utime(source / "bin" / "run.sh", (1_600_000_000, 1_600_000_000))
    unpack(pack(source), tmp_path / "copy", is_file=False)
    copied = tmp_path / "copy" / "bin" / "run.sh"
    assert copied.read_text() == "echo hi\n" and copied.stat().st_mode & 0o777 == 0o755
    assert copied.stat().st_mtime == 1_600_000_000

    def tar_of(*members: tarfile.TarInfo) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for member in members:
                tar.addfile(member, io.BytesIO(b"x") if member.isfile() else None)
        return buffer.getvalue()

    link = tarfile.TarInfo("link")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    unpack(tar_of(link), tmp_path / "links", is_file=False)
    assert list((tmp_path / "links").iterdir()) == []
    escape = tarfile.TarInfo("../escaped")
    escape.size = 1
    with pytest.raises(ProjectGenError, match="must stay inside"):
        unpack(tar_of(escape), tmp_path / "escape", is_file=False)
    assert not (tmp_path / "escaped").exists()
