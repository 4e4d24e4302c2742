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
