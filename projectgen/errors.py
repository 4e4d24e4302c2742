"""Errors that mean "the user gave us something wrong", shown as one line by the CLI."""
from __future__ import annotations

from pathlib import Path


class ProjectGenError(Exception):
    """A user-facing problem (bad task folder, bad option): one clear line, exit code 2."""


class TaskFormatError(ProjectGenError):
    """A task folder or its config is malformed; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def first_line(exc: BaseException) -> str:
    """An error's first line of text, or its class name when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def error_line(exc: BaseException) -> str:
    """``Class: first line`` for records (run.json, ledgers), where the kind of error matters."""
    text = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {text.splitlines()[0]}" if text else name


def one_line(exc: BaseException) -> str:
    """The whole message joined onto one line, for the CLI's single line on stderr."""
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
