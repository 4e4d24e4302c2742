"""Where a run keeps its LangGraph checkpoints: SQLite in the run folder, or PostgreSQL.

A PostgreSQL URL is checked (scheme, installed extra) before anything is written for it, and
a database that cannot be reached fails with one line that does not show its password. SQLite
stays on the machine that ran the unit, so a batch whose units may land on several machines
names it as per-machine state (`per_machine_checkpoints`) for the executor to refuse.
"""
from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError, first_line


def check_checkpoint_url(url: str | None) -> None:
    """Refuse a checkpoint URL we cannot use before anything is written for it."""
    if url is None:
        return
    if not url.startswith(("postgres://", "postgresql://")):
        raise ProjectGenError(f"--checkpoint-url must be a PostgreSQL URL (postgresql://...), got {url!r}")
    try:
        import langgraph.checkpoint.postgres.aio  # noqa: F401
    except ImportError:
        raise ProjectGenError("PostgreSQL checkpoints need the postgres extra: "
                              "pip install 'projectgen[postgres]'") from None


def per_machine_checkpoints(url: str | None) -> dict[str, str]:
    """The checkpoint state a batch would keep on each machine (what -> the option that shares it), for
    `RayExecutor.refuse_per_machine`: SQLite in each run folder without `url`, nothing with one."""
    return {} if url else {"checkpoints in SQLite in each run folder": "--checkpoint-url postgresql://USER@HOST/DB"}


async def check_checkpoint_database(url: str | None) -> None:
    """Refuse, before anything is written, a PostgreSQL URL that is unusable or unreachable; its tables are
    made here, so the units of a batch that start at once find them (none of them races to make them)."""
    if url is None:
        return
    async with postgres_saver(url):
        pass


@asynccontextmanager
async def open_checkpointer(sqlite_path: Path, url: str | None,
                            before_write: Callable[[], None] | None = None) -> AsyncIterator[Any]:
    """SQLite at `sqlite_path` (the run folder's) by default; PostgreSQL when `url` is given (tables created
    on first use).

    `before_write()`, when given, is called before each checkpoint is written (`synced_before_writes`).
    """
    if url is None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(sqlite_path)) as saver:
            try:
                yield synced_before_writes(saver, before_write)
            finally:
                await roll_back_unfinished_write(saver)
        return
    async with postgres_saver(url) as saver:
        yield synced_before_writes(saver, before_write)


async def roll_back_unfinished_write(saver: Any) -> None:
    """Roll back a checkpoint write cut off between its INSERT and its commit, before the file is closed.

    A unit torn down mid-write (a KeyboardInterrupt raised in a node makes `asyncio.run` cancel the saver's
    background write) leaves the transaction open, and the cut-off write's statement can outlive the
    close: SQLite then keeps the connection, and its write lock, until that statement is freed, so the same
    process resuming the run meets "database is locked". Rolled back here, the lock goes with the close
    whatever is left; the resumed run redoes that write from the last committed checkpoint.
    """
    async with saver.lock:
        if saver.conn.in_transaction:
            await saver.conn.rollback()


@asynccontextmanager
async def postgres_saver(url: str) -> AsyncIterator[Any]:
    """LangGraph's PostgreSQL saver on one connection to `url`, its tables made when missing."""
    check_checkpoint_url(url)
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection, OperationalError
    from psycopg.rows import dict_row

    try:
        connection = await AsyncConnection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    except OperationalError as exc:
        raise ProjectGenError(f"cannot reach the checkpoint database {_redact(url)}: "
                              f"{first_line(exc)}") from None
    async with connection:
        saver = AsyncPostgresSaver(conn=connection)
        await saver.setup()
        yield saver


def synced_before_writes(saver: Any, before_write: Callable[[], None] | None) -> Any:
    """`saver`, calling `before_write()` before each write of a checkpoint or of a task's writes.

    An executor that copies a run folder to another machine passes its sync: the copy is then never
    behind the checkpoint, so a run resumed elsewhere from the checkpoint finds the files (the best
    repository, the usage lines) of every step the checkpoint says is done. The saver's own write
    methods are wrapped on the instance: LangGraph's saver classes keep every other method.
    """
    if before_write is None:
        return saver
    for name in ("aput", "aput_writes"):
        write = getattr(saver, name)

        async def synced(*args: Any, _write: Any = write, **kwargs: Any) -> Any:
            before_write()
            return await _write(*args, **kwargs)

        setattr(saver, name, synced)
    for name in ("put", "put_writes"):
        write = getattr(saver, name)

        def synced_sync(*args: Any, _write: Any = write, **kwargs: Any) -> Any:
            before_write()
            return _write(*args, **kwargs)

        setattr(saver, name, synced_sync)
    return saver


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
