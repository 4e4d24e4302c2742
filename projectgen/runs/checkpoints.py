"""Where a LiveCoder run keeps its LangGraph checkpoints: SQLite in the run folder, or PostgreSQL.

A PostgreSQL URL is checked (scheme, installed extra) before anything is written for it, and
a database that cannot be reached fails with one line that does not show its password.
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from projectgen.errors import ProjectGenError, first_line
from projectgen.runs import layout


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


@asynccontextmanager
async def open_checkpointer(out_dir: Path, url: str | None) -> AsyncIterator[Any]:
    """SQLite in the run folder by default; PostgreSQL when `url` is given (tables created on first use)."""
    if url is None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(out_dir / layout.CHECKPOINTS)) as saver:
            yield saver
        return
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


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
