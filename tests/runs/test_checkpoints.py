"""The run folder's SQLite checkpoints: a write cut off between its INSERT and its commit holds no lock once
the checkpointer is closed, so the same process can resume the run."""
from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from projectgen.runs.checkpoints import open_checkpointer


def write_lock_is_free(path: Path) -> bool:
    connection = sqlite3.connect(path, timeout=0)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.rollback()
        return True
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return False
    finally:
        connection.close()


def test_a_write_cut_off_before_its_commit_leaves_no_lock_behind(tmp_path: Path) -> None:
    """As when a unit is torn down mid-write: the transaction is open and a statement outlives the close
    (here: a query's cursor is kept half read), which without the rollback keeps SQLite's write lock."""
    path = tmp_path / "checkpoints.sqlite"
    kept: list[Any] = []

    async def cut_off() -> None:
        async with open_checkpointer(path, None) as saver:
            await saver.setup()
            await saver.conn.execute(
                "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) "
                "VALUES ('t', '', 'c', 'task', 0, 'ch', 'json', x'00')")
            assert saver.conn.in_transaction
            unfinished = await saver.conn.execute("SELECT name FROM sqlite_master")
            await unfinished.fetchone()
            kept.append(unfinished)  # a statement still stepping: SQLite cannot free the connection yet
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(cut_off())
    assert write_lock_is_free(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT count(*) FROM writes").fetchone() == (0,)  # the cut-off write is gone
