"""Log records during a command, in projectgen's own one-line form: the door's retries and cut replies read
``projectgen: model call ... retry 1 of 3 in 2.0s``, and libraries' chatter below ERROR is quiet.

Without this, the first library that calls `logging.warning()` configures the root logger and every later
record prints raw as ``WARNING:name:message`` lines in the middle of the progress output."""
from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

OWN_PREFIX = "projectgen"


class OneLineHandler(logging.Handler):
    """Writes a record as one line to the current `sys.stderr` (looked up per record, so a live progress bar,
    which redirects stderr, keeps the line above it). projectgen's records from WARNING up, others' from ERROR
    up."""

    def filter(self, record: logging.LogRecord) -> bool:
        own = record.name == OWN_PREFIX or record.name.startswith(OWN_PREFIX + ".")
        return record.levelno >= (logging.WARNING if own else logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            lines = record.getMessage().strip().splitlines() or [""]
        except Exception:  # noqa: BLE001 - a malformed record must not end the command
            lines = [str(record.msg)]
        own = record.name == OWN_PREFIX or record.name.startswith(OWN_PREFIX + ".")
        print(f"projectgen: {lines[0]}" if own else f"projectgen: {record.name}: {lines[0]}", file=sys.stderr)


@contextmanager
def command_logging() -> Iterator[None]:
    """For one command: the root logger's handlers replaced by a `OneLineHandler` (so no library's
    `basicConfig` applies either), and put back afterwards."""
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [OneLineHandler()]
    try:
        yield
    finally:
        root.handlers = saved
